-- steps_range_top_kernels: per step and device, the kernels with the most GPU time in that
-- step, for steps found from NVTX ranges: what steps_top_kernels gives over the step_work
-- of steps_range_work (every step), in one query. A kernel is in the step whose range
-- holds its launching call (the latest-starting range of the call's thread that started
-- by the call, if still open); the call is found on one BIGINT key (the pid above CUPTI's
-- 32-bit correlation id) and each (call, step) pair counts once, as step_work's DISTINCT
-- rows do. Building step_work from every GPU operation, de-duplicated and sorted, then
-- joining the kernels to it cost 5.6 CPU s on the 5M-kernel trace with 2,076 steps. The
-- ranking is step_top_kernels (queries/_step_top_kernels.sql), as in steps_top_kernels.
--
-- Needs the relation step_bounds: one row per step range (a step is one range per process),
-- step, globalTid (the range's thread), start and "end" (the range, ns from session start),
-- which tracelens.stepwork registers.
--
-- Parameters:
--   $top  BIGINT  kernels kept per step and device
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter
--
-- Columns (by step, device, rank): as steps_top_kernels
--   step      BIGINT   step number
--   device    BIGINT   CUDA device ordinal
--   rank      BIGINT   1 for the kernel with the most time in the step on the device
--   calls     BIGINT   its launches in the step
--   total_ns  BIGINT   their summed duration, ns
--   time_pct  DOUBLE   share of the step's kernel time on the device, % (one decimal)
--   name      VARCHAR  demangled kernel name
WITH steps AS (
    SELECT step::BIGINT AS step, globalTid::BIGINT AS globalTid, start::BIGINT AS start,
           "end"::BIGINT AS "end"
    FROM step_bounds
),
calls AS (
    SELECT DISTINCT (pid_of(r.globalTid) << 32) | r.correlationId AS launch, s.step
    FROM runtime_calls AS r
    ASOF JOIN steps AS s ON s.globalTid = r.globalTid AND s.start <= r.start
    WHERE r.start <= s."end"
),
per_kernel AS (
    SELECT c.step, k.deviceId AS device, k.demangledName AS name_id, count(*) AS calls,
           sum(k."end" - k.start) AS total_ns
    FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS k
    JOIN calls AS c ON c.launch = (pid_of(k.globalPid) << 32) | k.correlationId
    GROUP BY ALL
)
SELECT * FROM step_top_kernels('per_kernel', $top)
ORDER BY step, device, rank
