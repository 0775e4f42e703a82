-- steps_context_processes: per CUDA device, how many traced processes had a CUDA context on
-- it, from TARGET_INFO_CUDA_CONTEXT_INFO (one row per context: schema 3.13.2 and later;
-- older exports: steps_null_stream_processes.sql). A process launches only on a device it
-- has a context on, so a device listed with one process is one process's launch order,
-- which the step search then orders without reading each launch's process
-- (tracelens.steps_order.one_process_devices). A small metadata table: runs on the export's
-- own tables (Trace._sqlite_rows). No parameters.
--
-- Columns (by device):
--   device     INTEGER  CUDA device ordinal (the activity rows' deviceId)
--   processes  INTEGER  distinct processes (processId, the OS pid) with a context on it
SELECT deviceId AS device, count(DISTINCT processId) AS processes
FROM TARGET_INFO_CUDA_CONTEXT_INFO
WHERE deviceId IS NOT NULL
GROUP BY deviceId
ORDER BY device
