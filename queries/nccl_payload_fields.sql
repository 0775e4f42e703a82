-- nccl_payload_fields: where each payload schema keeps its message size: the entries named
-- "Message size [bytes]" of NVTX_PAYLOAD_SCHEMA_ENTRIES (NCCL's schemas name it so). Runs
-- on the export's own tables, as nccl_payloads. No parameters. Needs export schema 3.25+.
--
-- Columns:
--   domainId  INTEGER  NVTX domain of the schema
--   schemaId  INTEGER  the payload schema
--   type      INTEGER  NVTX payload entry type (22 = size_t, 18 = uint64, ...)
--   offset    INTEGER  byte offset of the entry in the payload struct (NULL: 0)
SELECT domainId, schemaId, "type", "offset"
FROM NVTX_PAYLOAD_SCHEMA_ENTRIES
WHERE name = 'Message size [bytes]'
