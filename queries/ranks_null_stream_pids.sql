-- ranks_null_stream_pids: ranks_context_pids.sql for the exports before
-- TARGET_INFO_CUDA_CONTEXT_INFO (schema 3.4.0 and older): TARGET_INFO_CUDA_NULL_STREAM has
-- one row per context (its default stream) with the context's processId. Runs on the
-- export's own tables (Trace._sqlite_rows). No parameters.
--
-- Columns, ordered by pid:
--   pid  INTEGER  operating-system process id (processId) of a process with a CUDA context
SELECT DISTINCT processId AS pid
FROM TARGET_INFO_CUDA_NULL_STREAM
WHERE deviceId IS NOT NULL AND processId IS NOT NULL
ORDER BY pid
