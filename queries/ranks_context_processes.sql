-- ranks_context_processes: how many traced processes had a CUDA context, from
-- TARGET_INFO_CUDA_CONTEXT_INFO (one row per context: schema 3.13.2 and later; older
-- exports: ranks_null_stream_processes.sql). A process launches only on a device it has a
-- context on, so an export listing one process holds one rank, and ranks skips reading each
-- kernel's process (ranks_processes.sql: ~0.85 CPU s of the bench trace's 5M kernels). A
-- small metadata table: runs on the export's own tables (Trace._sqlite_rows). No
-- parameters.
--
-- Columns (one row):
--   processes  INTEGER  distinct processes (processId, the OS pid) with a CUDA context
SELECT count(DISTINCT processId) AS processes
FROM TARGET_INFO_CUDA_CONTEXT_INFO
WHERE deviceId IS NOT NULL
