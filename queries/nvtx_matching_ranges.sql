-- nvtx_matching_ranges: how many NVTX ranges a --nvtx pattern matches. One row.
-- Needs nvtx_ranges() and nvtx_label_matches (Trace.load_nvtx_text).
-- Parameters:
--   $label_re  VARCHAR  as nvtx_selected_work
-- Columns:
--   ranges         BIGINT  ranges whose label or domain-qualified name matches
--   projectable    BIGINT  of those, the ones that end on the thread that opened them (only
--                          these select GPU work, as in nsys's projection)
SELECT count(*) AS ranges, count(*) FILTER (WHERE same_thread) AS projectable
FROM nvtx_ranges()
WHERE nvtx_label_matches(label, name, $label_re)
