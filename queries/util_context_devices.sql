-- util_context_devices: the CUDA devices a traced process had a CUDA context on, from
-- TARGET_INFO_CUDA_CONTEXT_INFO (one row per context: the DDL of schema 3.13.2 and later,
-- the shared nsys 2024.6 to 2026.1 exports). deviceId is the CUDA device ordinal, as in
-- the activity rows' deviceId and --device. Not TARGET_INFO_GPU (the machine's GPU
-- inventory: a capture without CUDA lists a GPU there) nor TARGET_INFO_CUDA_DEVICE (the
-- devices a process could see, opened or not). Older exports: util_null_stream_devices.sql.
-- Runs on the export's own tables (Trace._sqlite_rows). No parameters.
--
-- Columns (by device):
--   device  INTEGER  a CUDA device ordinal some traced process had a context on
SELECT DISTINCT deviceId AS device
FROM TARGET_INFO_CUDA_CONTEXT_INFO
WHERE deviceId IS NOT NULL
ORDER BY device
