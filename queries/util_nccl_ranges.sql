-- util_nccl_ranges: how many NVTX ranges NCCL recorded (labels starting with "nccl", e.g.
-- ncclAllReduce): NCCL puts message sizes in their payloads. Needs the nvtx_text table
-- (Trace.load_nvtx_text). No parameters.
-- Columns:
--   ranges  BIGINT  NVTX ranges whose label starts with "nccl" (case-insensitive)
SELECT count(*) AS ranges
FROM nvtx_text AS e
LEFT JOIN strings AS s ON s.id = e.textId
WHERE is_nvtx_range(e.eventType, e."end") AND coalesce(e.text, s.value) ILIKE 'nccl%'
