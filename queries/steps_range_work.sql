-- steps_range_work: the GPU operations launched inside some steps found from NVTX ranges
-- (tracelens steps' `range` and `marker` methods), with the step each is in: the set
-- --step/--steps restricts an analysis to, and what per-step top kernels are counted over.
-- As steps_by_range attributes work to a step: the CUDA API call that
-- launched the operation (same process and correlation id) was made in the step
-- (step_range_calls of _step_range_calls.sql: the call starts inside the step's range on
-- the range's thread, the latest-starting such range), so each operation is in one step at
-- most. The operation joins its call on step_range_calls' one BIGINT key.
--
-- Needs the relation step_bounds: one row per step range (a step is one range per process),
-- step, globalTid (the range's thread), start and "end" (the range, ns from session start),
-- which tracelens.stepwork registers
-- (binding 2,076 steps as four list parameters cost 1.6 CPU s).
--
-- Parameters:
--   $first   BIGINT    first step to select (inclusive)
--   $last    BIGINT    last step to select (inclusive)
--   $device, $pid, $stream  only the operations on this device, of this process, on this
--                           stream (NULL: any; --step with --device/--pid/--stream, which
--                           narrow the trace's steps' work here, in the one pass over it)
--   $start_ns, $end_ns  BIGINT  only the operations that pass this window as an event
--                           passes it (in_window: ends at or after $start_ns, starts
--                           before $end_ns; NULL: no bound):
--                           `tracelens steps --start/--end` recounts the steps that meet
--                           the window from their work in it, and reads only that work
--                           (tracelens.steps_within); --step N leaves them NULL
--
-- Columns (ordered by globalPid, correlationId):
--   globalPid      BIGINT  the GPU operation's globalPid
--   correlationId  BIGINT  its correlationId
--   step           BIGINT  the step it was launched in
SELECT DISTINCT op.globalPid, op.correlationId, c.step
FROM gpu_operations() AS op
JOIN step_range_calls('step_bounds', $first, $last) AS c
  ON c.launch = (pid_of(op.globalPid) << 32) | op.correlationId
WHERE ($device IS NULL OR op.device = $device) AND ($stream IS NULL OR op.stream = $stream)
  AND of_process(op.globalPid, $pid) AND in_window(op.start, op."end", $start_ns, $end_ns)
ORDER BY op.globalPid, op.correlationId, c.step
