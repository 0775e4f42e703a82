-- steps_range_work: the GPU operations launched inside some steps found from NVTX ranges
-- (tracelens steps' `range` and `marker` methods), with the step each is in: the set
-- --step/--steps restricts an analysis to, and what per-step top kernels are counted over.
-- As steps_by_range attributes work to a step: the CUDA API call that
-- launched the operation (same process and correlation id) starts inside the step's range
-- on the range's thread; with nested or overlapping step ranges, the latest-starting range
-- that started before the call (an ASOF join), so each operation is in one step at most.
--
-- The operation joins its call on one BIGINT key, the pid above CUPTI's 32-bit correlation
-- id (as util_work): the pairs launched_by() matches, with a smaller hash table.
--
-- Needs the relation step_bounds: one row per step range (a step is one range per process),
-- step, globalTid (the range's thread), start and "end" (the range, ns from session start),
-- which tracelens.stepwork registers
-- (binding 2,076 steps as four list parameters cost 1.6 CPU s).
--
-- Parameters:
--   $first   BIGINT    first step to select (inclusive)
--   $last    BIGINT    last step to select (inclusive)
--
-- Columns (ordered by globalPid, correlationId):
--   globalPid      BIGINT  the GPU operation's globalPid
--   correlationId  BIGINT  its correlationId
--   step           BIGINT  the step it was launched in
WITH steps AS (
    SELECT step::BIGINT AS step, globalTid::BIGINT AS globalTid, start::BIGINT AS start,
           "end"::BIGINT AS "end"
    FROM step_bounds
),
calls AS (
    SELECT (pid_of(r.globalTid) << 32) | r.correlationId AS launch, s.step
    FROM runtime_calls AS r
    ASOF JOIN steps AS s ON s.globalTid = r.globalTid AND s.start <= r.start
    WHERE r.start <= s."end" AND s.step BETWEEN $first AND $last
)
SELECT DISTINCT op.globalPid, op.correlationId, c.step
FROM gpu_operations() AS op
JOIN calls AS c ON c.launch = (pid_of(op.globalPid) << 32) | op.correlationId
ORDER BY op.globalPid, op.correlationId, c.step
