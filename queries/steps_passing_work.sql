-- steps_passing_work: the GPU operations of some steps that pass an event filter, with
-- their step, device, times and kind: what `tracelens steps --pid/--stream` counts each of
-- the trace's steps on (per step and device: first start, last end, busy union, kernels
-- and their time; tracelens.steps_within). The steps' work is the temp table step_work
-- (globalPid, correlationId, step: from steps_range_work or steps_window_work, what
-- --step N selects), filled by tracelens.steps_within; an operation in no step is in no row.
--
-- Parameters:
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter (NULL: any)
--
-- Columns (ordered by step, device, start, end, pid, name_id):
--   step       BIGINT   the step the operation is in
--   device     BIGINT   CUDA device ordinal
--   start      BIGINT   GPU start, ns from session start
--   end        BIGINT   GPU end, ns from session start
--   is_kernel  BOOLEAN  a kernel (not a memcpy, memset or CUDA graph replay)
--   pid        BIGINT   the launching process id
--   name_id    BIGINT   a kernel's demangled-name StringIds id (NULL for the other kinds):
--                       the steps' top kernels are ranked from these rows
--                       (tracelens.steps_within), not from a second pass over the kernels
SELECT w.step::BIGINT AS step, op.deviceId::BIGINT AS device, op.start::BIGINT AS start,
       op."end"::BIGINT AS "end", op.kind = 'kernel' AS is_kernel,
       pid_of(op.globalPid)::BIGINT AS pid, op.name_id::BIGINT AS name_id
FROM gpu_work($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS op
JOIN step_work AS w ON w.globalPid = op.globalPid AND w.correlationId = op.correlationId
ORDER BY step, device, start, "end", pid, name_id
