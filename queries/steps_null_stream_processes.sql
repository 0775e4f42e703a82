-- steps_null_stream_processes: steps_context_processes.sql for the exports before
-- TARGET_INFO_CUDA_CONTEXT_INFO (schema 3.4.0 and older, the shared nsys 2020.5 to 2023.3
-- exports): TARGET_INFO_CUDA_NULL_STREAM has one row per context (its default stream) with
-- the context's deviceId and processId. Runs on the export's own tables
-- (Trace._sqlite_rows). No parameters.
--
-- Columns (by device):
--   device     INTEGER  CUDA device ordinal (the activity rows' deviceId)
--   processes  INTEGER  distinct processes (processId, the OS pid) with a context on it
SELECT deviceId AS device, count(DISTINCT processId) AS processes
FROM TARGET_INFO_CUDA_NULL_STREAM
WHERE deviceId IS NOT NULL
GROUP BY deviceId
ORDER BY device
