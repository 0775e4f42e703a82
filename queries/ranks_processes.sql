-- ranks_processes: the processes that ran kernels, each with the lowest CUDA device it ran
-- them on, its kernel time and its collective kernels. An export of a single-node job
-- profiled as one report (`nsys profile torchrun --nproc-per-node N`) holds every rank's
-- process, and maybe helpers (a data-loader worker or a tokenizer that ran a few kernels):
-- the library takes the ranks from these figures (ranks/processes.py), and the device order
-- is the rank order when each rank drives the GPU of its local rank (torchrun's convention).
-- A rank's device is where its collectives ran: a rank that also ran a few kernels on
-- GPU 0 (work before torch.cuda.set_device) is still the rank of its own GPU.
-- Needs the temp table rank_comm_kernels(name_id BIGINT, kind VARCHAR): the demangled-name
-- ids of the communication kernels (the library fills it).
-- Parameters: none.
-- Columns, ordered by rank_device, pid:
--   pid           BIGINT  operating-system process id
--   first_device  BIGINT  lowest CUDA device ordinal of its kernels
--   rank_device   BIGINT  lowest CUDA device ordinal of its communication kernels, else
--                         first_device
--   devices       BIGINT  CUDA devices its kernels ran on
--   kernels       BIGINT  kernels it ran
--   kernel_ns     BIGINT  its kernels' durations summed (overlaps counted twice), ns
--   collectives   BIGINT  of its kernels, the communication kernels (NCCL collectives, ...)
SELECT
    pid_of(globalPid) AS pid,
    min(deviceId) AS first_device,
    coalesce(
        min(deviceId) FILTER (WHERE demangledName IN (SELECT name_id FROM rank_comm_kernels)),
        min(deviceId)
    ) AS rank_device,
    count(DISTINCT deviceId) AS devices,
    count(*) AS kernels,
    sum("end" - start)::BIGINT AS kernel_ns,
    count(*) FILTER (WHERE demangledName IN (SELECT name_id FROM rank_comm_kernels)) AS collectives
FROM kernels
GROUP BY pid
ORDER BY rank_device, pid
