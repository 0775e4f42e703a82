-- steps_range_work: the GPU operations launched inside some steps found from NVTX ranges
-- (tracelens steps' `range` and `marker` methods), with the step each is in: the set
-- --step/--steps restricts an analysis to, and what per-step top kernels are counted over.
-- As steps_by_range attributes work to a step: the CUDA API call that
-- launched the operation (same process and correlation id) starts inside the step's range
-- on the range's thread; with nested or overlapping step ranges, the latest-starting range
-- that started before the call (an ASOF join), so each operation is in one step at most.
--
-- Parameters (the steps' ranges as parallel lists, one element per step):
--   $steps   BIGINT[]  step numbers
--   $tids    BIGINT[]  each step range's thread (globalTid)
--   $starts  BIGINT[]  each range's start, ns from session start
--   $ends    BIGINT[]  each range's end, ns
--   $first   BIGINT    first step to select (inclusive)
--   $last    BIGINT    last step to select (inclusive)
--
-- Columns (ordered by globalPid, correlationId):
--   globalPid      BIGINT  the GPU operation's globalPid
--   correlationId  BIGINT  its correlationId
--   step           BIGINT  the step it was launched in
WITH steps AS (
    SELECT unnest($steps) AS step, unnest($tids) AS globalTid, unnest($starts) AS start,
           unnest($ends) AS "end"
),
calls AS (
    SELECT r.globalTid, r.correlationId, s.step
    FROM runtime_calls AS r
    ASOF JOIN steps AS s ON s.globalTid = r.globalTid AND s.start <= r.start
    WHERE r.start <= s."end" AND s.step BETWEEN $first AND $last
)
SELECT DISTINCT op.globalPid, op.correlationId, c.step
FROM gpu_operations() AS op
JOIN calls AS c ON launched_by(op.globalPid, op.correlationId, c.globalTid, c.correlationId)
ORDER BY op.globalPid, op.correlationId, c.step
