-- ranks_context_pids: the traced processes that had a CUDA context, from
-- TARGET_INFO_CUDA_CONTEXT_INFO (one row per context: schema 3.13.2 and later; older
-- exports: ranks_null_stream_pids.sql): the processes whose work a rank's export holds.
-- ranks compares them with the number in the file's name: a name numbered by process id
-- (nsys -o report_%p) is numbered by one of them, and its numbers' gaps are no missing
-- ranks. A small metadata table: runs on the export's own tables (Trace._sqlite_rows).
-- No parameters.
--
-- Columns, ordered by pid:
--   pid  INTEGER  operating-system process id (processId) of a process with a CUDA context
SELECT DISTINCT processId AS pid
FROM TARGET_INFO_CUDA_CONTEXT_INFO
WHERE deviceId IS NOT NULL AND processId IS NOT NULL
ORDER BY pid
