-- steps_range_count: how many NVTX ranges have a label matching a glob (to tell "no such
-- range" from "its ranges launched no GPU work"). Needs the nvtx_text table.
-- Parameters:
--   $pattern  VARCHAR  label glob (* ? [..])
-- Columns:
--   ranges  BIGINT  matching ranges (marks, which have no end, are not ranges)
SELECT count(*) AS ranges
FROM nvtx_text AS n
LEFT JOIN strings AS s ON s.id = n.textId
WHERE is_nvtx_range(n.eventType, n."end") AND coalesce(n.text, s.value) GLOB $pattern
