-- nccl_payloads: the NVTX ranges NCCL recorded (labels starting with "nccl": ncclAllReduce,
-- ncclSend, ...) that carry an extended (binary) payload, with that payload: NCCL puts the
-- message size there. Runs on the export's own tables (Trace._sqlite_rows: SQLite, or
-- DuckDB on a parquetdir), not on the views: the views do not carry binaryData. No
-- parameters. Needs NVTX_EVENTS with binaryData (export schema 3.25+).
--
-- Columns (by start):
--   label        TEXT     the range's label (text, or its registered string)
--   start        INTEGER  range start, ns from session start
--   end          INTEGER  range end, ns
--   globalTid    INTEGER  the range's thread (pid in bits 24-47)
--   binaryData   BLOB     the payload as nsys stores it: a 32-byte header (domain id,
--                         schema id, sizes) then the payload struct
SELECT coalesce(n.text, s.value) AS label, n.start, n."end", n.globalTid, n.binaryData
FROM NVTX_EVENTS AS n
LEFT JOIN StringIds AS s ON s.id = n.textId
WHERE n.binaryData IS NOT NULL AND n."end" IS NOT NULL
  AND lower(coalesce(n.text, s.value)) LIKE 'nccl%'
ORDER BY n.start
