-- ranks_nccl_rank_fields: where NCCL's payload schemas keep the process's rank and the
-- communicator's size: the entries named "Rank" and "No. of ranks" of
-- NVTX_PAYLOAD_SCHEMA_ENTRIES (the schemas of ncclCommInitRank, ncclCommSplit, ...). Runs
-- on the export's own tables (Trace._sqlite_rows), as nccl_payload_fields. No parameters.
-- Needs export schema 3.25+.
--
-- Columns (by domainId, schemaId, name):
--   domainId  INTEGER  NVTX domain of the schema
--   schemaId  INTEGER  the payload schema
--   name      TEXT     'Rank' (the process's rank in the communicator) or 'No. of ranks'
--   type      INTEGER  NVTX payload entry type (5 = int, ...)
--   offset    INTEGER  byte offset of the entry in the payload struct (NULL: 0)
SELECT domainId, schemaId, name, "type", "offset"
FROM NVTX_PAYLOAD_SCHEMA_ENTRIES
WHERE name IN ('Rank', 'No. of ranks')
ORDER BY domainId, schemaId, name
