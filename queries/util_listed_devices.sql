-- util_listed_devices: the CUDA device ordinals the capture saw, from TARGET_INFO_CUDA_DEVICE
-- (cudaId -> gpuId per process, nsys 2023.3+, schema 3.23+): the ordinals of the activity
-- rows' deviceId and of --device. Runs on the export's own tables (Trace._sqlite_rows). No
-- parameters. Needs TARGET_INFO_CUDA_DEVICE (older exports: TARGET_INFO_GPU, read by
-- Trace.gpus()).
--
-- Columns (by device):
--   device  INTEGER  a CUDA device ordinal some traced process saw
SELECT DISTINCT cudaId AS device
FROM TARGET_INFO_CUDA_DEVICE
WHERE cudaId IS NOT NULL
ORDER BY device
