-- steps_window_work: the GPU operations inside some steps found from the period of the
-- kernel launch sequence (tracelens steps' `period` method), the set --step/--steps
-- restricts an analysis to. Such a step is a stretch of one device's launch sequence, so
-- its work is that device's operations (kernels, memcpys, memsets, graph replays) that
-- start from the step's first kernel up to, not including, the first kernel of the step
-- after the selection (the last step's last kernel end when no step follows).
--
-- Parameters (one window per device, parallel lists):
--   $devices  BIGINT[]  CUDA device ordinals
--   $starts   BIGINT[]  window start per device (inclusive), ns from session start
--   $ends     BIGINT[]  window end per device (exclusive), ns
--
-- Columns (ordered by both):
--   globalPid      BIGINT  the GPU operation's globalPid
--   correlationId  BIGINT  its correlationId
WITH windows AS (
    SELECT unnest($devices) AS device, unnest($starts) AS start, unnest($ends) AS "end"
)
SELECT DISTINCT op.globalPid, op.correlationId
FROM gpu_operations() AS op
JOIN windows AS w ON op.device = w.device AND op.start >= w.start AND op.start < w."end"
ORDER BY op.globalPid, op.correlationId
