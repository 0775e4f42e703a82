-- ranks_nccl_comm_inits: the payloads of the NVTX ranges NCCL opens when it creates a
-- communicator (ncclCommInitRank, ncclCommInitRankConfig, ncclCommInitRankScalable,
-- ncclCommSplit, ncclCommShrink): each carries the process's rank in the new communicator
-- and its size (ranks_nccl_rank_fields says where). Runs on the export's own tables, as
-- nccl_payloads (the views do not carry binaryData). No parameters. Needs NVTX_EVENTS with
-- binaryData (export schema 3.25+).
--
-- Columns (by start):
--   binaryData  BLOB  the payload as nsys stores it: a 32-byte header (domain id, schema
--                     id, sizes) then the payload struct
SELECT n.binaryData
FROM NVTX_EVENTS AS n
LEFT JOIN StringIds AS s ON s.id = n.textId
WHERE n.binaryData IS NOT NULL
  AND coalesce(n.text, s.value) IN (
      'ncclCommInitRank', 'ncclCommInitRankConfig', 'ncclCommInitRankScalable',
      'ncclCommSplit', 'ncclCommShrink'
  )
ORDER BY n.start
