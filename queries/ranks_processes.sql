-- ranks_processes: the processes that ran kernels, each with the lowest CUDA device it ran
-- them on. An export of a single-node job profiled as one report (`nsys profile torchrun
-- --nproc-per-node N`) holds every rank's process: each of these is a rank, and the device
-- order is the rank order when each rank drives the GPU of its local rank (torchrun's
-- convention).
-- Parameters: none.
-- Columns, ordered by first_device, pid:
--   pid           BIGINT  operating-system process id
--   first_device  BIGINT  lowest CUDA device ordinal of its kernels
--   devices       BIGINT  CUDA devices its kernels ran on
--   kernels       BIGINT  kernels it ran
SELECT
    pid_of(globalPid) AS pid,
    min(deviceId) AS first_device,
    count(DISTINCT deviceId) AS devices,
    count(*) AS kernels
FROM kernels
GROUP BY pid
ORDER BY first_device, pid
