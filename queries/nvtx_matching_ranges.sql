-- nvtx_matching_ranges: how many NVTX ranges a --nvtx pattern matches. One row.
-- Needs nvtx_ranges() (Trace.load_nvtx_text).
-- Parameters:
--   $pattern  VARCHAR  as nvtx_selected_work
-- Columns:
--   ranges         BIGINT  ranges whose label or domain-qualified name matches
--   projectable    BIGINT  of those, the ones that end on the thread that opened them (only
--                          these select GPU work, as in nsys's projection)
SELECT count(*) AS ranges, count(*) FILTER (WHERE same_thread) AS projectable
FROM nvtx_ranges()
WHERE label GLOB $pattern OR name GLOB $pattern
