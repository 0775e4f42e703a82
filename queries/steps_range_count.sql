-- steps_range_count: how many NVTX ranges have a label matching a glob (to tell "no such
-- range" from "its ranges launched no GPU work"). Needs the nvtx_text table.
-- Parameters:
--   $label_re  VARCHAR  an RE2 regex matched in full: filters.glob_regex of the label glob
-- Columns:
--   ranges  BIGINT  matching ranges (marks, which have no end, are not ranges)
SELECT count(*) AS ranges
FROM nvtx_text AS n
LEFT JOIN strings AS s ON s.id = n.textId
WHERE is_nvtx_range(n.eventType, n."end")
  AND regexp_full_match(coalesce(n.text, s.value), $label_re)
