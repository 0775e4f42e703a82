-- steps_window_work: the GPU operations inside some steps found from the period of the
-- kernel launch sequence (tracelens steps' `period` method), with the step each is in: the
-- set --step/--steps restricts an analysis to, and what per-step top kernels are counted
-- over. Such a step is a stretch of one device's launch sequence, so its work is that
-- device's operations (kernels, memcpys, memsets, graph replays) that start from the
-- step's first kernel up to, not including, the next step's first kernel (the step's end
-- + 1 when no step follows: the end of its last operation, copies and memsets included,
-- tracelens.steps_period._copies_in_steps). One ASOF join per operation, never a range join.
--
-- Needs the relation step_bounds: one window per step and device (windows of a device do
-- not overlap), device, step, start (inclusive) and "end" (exclusive), ns from session
-- start, and pids (BIGINT[]: the loop's processes on a device another program used too,
-- whose operations alone are its steps'; NULL: every process's), which tracelens.stepwork registers (list parameters cost ~0.2 CPU s per 1,000
-- elements to bind).
--
-- Parameters:
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
-- One row per (operation's correlation id, step): the kernels of a CUDA graph launch traced
-- node by node share their launch's correlation id, and a row per kernel had every query
-- that joins the GPU work with these rows by that id count each kernel once per kernel of
-- the graph (a step's kernels and kernel time 4x for a graph of 4 kernels).
--
-- Columns (ordered by globalPid, correlationId):
--   globalPid      BIGINT  the GPU operation's globalPid
--   correlationId  BIGINT  its correlationId
--   step           BIGINT  the step it is in
WITH windows AS (
    SELECT device::BIGINT AS device, step::BIGINT AS step, start::BIGINT AS start,
           "end"::BIGINT AS "end", pids::BIGINT[] AS pids
    FROM step_bounds
)
SELECT DISTINCT op.globalPid, op.correlationId, w.step
FROM gpu_operations() AS op
ASOF JOIN windows AS w ON op.device = w.device AND op.start >= w.start
WHERE op.start < w."end" AND (w.pids IS NULL OR list_contains(w.pids, pid_of(op.globalPid)))
  AND ($device IS NULL OR op.device = $device) AND ($stream IS NULL OR op.stream = $stream)
  AND of_process(op.globalPid, $pid) AND in_window(op.start, op."end", $start_ns, $end_ns)
ORDER BY op.globalPid, op.correlationId, w.step
