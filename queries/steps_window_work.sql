-- steps_window_work: the GPU operations inside some steps found from the period of the
-- kernel launch sequence (tracelens steps' `period` method), with the step each is in: the
-- set --step/--steps restricts an analysis to, and what per-step top kernels are counted
-- over. Such a step is a stretch of one device's launch sequence, so its work is that
-- device's operations (kernels, memcpys, memsets, graph replays) that start from the
-- step's first kernel up to, not including, the next step's first kernel (the step's last
-- kernel end + 1 when no step follows). One ASOF join per operation, never a range join.
--
-- Parameters (one window per step and device, parallel lists; windows of a device do not
-- overlap):
--   $devices  BIGINT[]  CUDA device ordinals
--   $steps    BIGINT[]  step numbers
--   $starts   BIGINT[]  window start (inclusive), ns from session start
--   $ends     BIGINT[]  window end (exclusive), ns
--
-- Columns (ordered by globalPid, correlationId):
--   globalPid      BIGINT  the GPU operation's globalPid
--   correlationId  BIGINT  its correlationId
--   step           BIGINT  the step it is in
WITH windows AS (
    SELECT unnest($devices) AS device, unnest($steps) AS step, unnest($starts) AS start,
           unnest($ends) AS "end"
)
SELECT op.globalPid, op.correlationId, w.step
FROM gpu_operations() AS op
ASOF JOIN windows AS w ON op.device = w.device AND op.start >= w.start
WHERE op.start < w."end"
ORDER BY op.globalPid, op.correlationId, w.step
