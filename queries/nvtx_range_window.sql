-- nvtx_range_window: the time window covered by the NVTX ranges whose label matches a
-- pattern, to narrow an analysis to e.g. one decode step. One row.
-- Needs the nvtx_text table (Trace.load_nvtx_text()).
-- Parameters:
--   $pattern  VARCHAR  label, or a glob pattern (* ? [..]): 'decode_step_3', 'decode_step_*'
-- Columns:
--   ranges    BIGINT  matching ranges (marks, which have no end, are not ranges)
--   start_ns  BIGINT  start of the first matching range, ns from session start
--   end_ns    BIGINT  end of the last matching range, ns from session start
SELECT count(*) AS ranges, min(n.start) AS start_ns, max(n."end") AS end_ns
FROM nvtx_text AS n
LEFT JOIN strings AS s ON s.id = n.textId
WHERE n."end" IS NOT NULL
  AND coalesce(n.text, s.value) GLOB $pattern
