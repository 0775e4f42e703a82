-- ranks_null_stream_processes: ranks_context_processes.sql for the exports before
-- TARGET_INFO_CUDA_CONTEXT_INFO (schema 3.4.0 and older): TARGET_INFO_CUDA_NULL_STREAM has
-- one row per context (its default stream) with the context's processId. Runs on the
-- export's own tables (Trace._sqlite_rows). No parameters.
--
-- Columns (one row):
--   processes  INTEGER  distinct processes (processId, the OS pid) with a CUDA context
SELECT count(DISTINCT processId) AS processes
FROM TARGET_INFO_CUDA_NULL_STREAM
WHERE deviceId IS NOT NULL
