-- report_nvtx_projection: where the GPU work of a CPU time range ran. An NVTX range is CPU
-- time; the kernels, memcpys and memsets its thread launched inside it (matched through the
-- launching API call's correlationId) usually run later on the GPU. Used to center the
-- report's timeline window on a step's GPU work.
--
-- Parameters:
--   $t0, $t1  BIGINT  the CPU range, ns from session start
--   $tid      BIGINT  globalTid of the thread that owns the range (NULL: any thread)
--
-- Columns (one row; NULLs when nothing was launched):
--   gpu_start  BIGINT  earliest start of the launched GPU work
--   gpu_end    BIGINT  latest end
--   events     BIGINT  GPU operations launched
WITH calls AS (
    SELECT correlationId, globalTid >> 24 AS pid_key
    FROM runtime_calls
    WHERE start >= $t0 AND start <= $t1 AND ($tid IS NULL OR globalTid = $tid)
),
gpu AS (
    SELECT start, "end", correlationId, globalPid FROM kernels
    UNION ALL SELECT start, "end", correlationId, globalPid FROM memcpys
    UNION ALL SELECT start, "end", correlationId, globalPid FROM memsets
)
SELECT min(gpu.start) AS gpu_start, max(gpu."end") AS gpu_end, count(*) AS events
FROM gpu
JOIN calls ON calls.correlationId = gpu.correlationId AND calls.pid_key = gpu.globalPid >> 24
