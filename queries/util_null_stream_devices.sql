-- util_null_stream_devices: the CUDA devices a traced process had a CUDA context on, in
-- the exports before TARGET_INFO_CUDA_CONTEXT_INFO (the DDL of schema 3.4.0 and older, the
-- shared nsys 2020.5 to 2023.3 exports): TARGET_INFO_CUDA_NULL_STREAM has one row per
-- context (its default stream) with the context's deviceId, the CUDA device ordinal of the
-- activity rows. The same answer as util_context_devices.sql. Runs on the export's own
-- tables (Trace._sqlite_rows). No parameters.
--
-- Columns (by device):
--   device  INTEGER  a CUDA device ordinal some traced process had a context on
SELECT DISTINCT deviceId AS device
FROM TARGET_INFO_CUDA_NULL_STREAM
WHERE deviceId IS NOT NULL
ORDER BY device
