-- steps_top_kernels: per period step and device, the kernels with the most GPU time in that
-- step (tracelens steps' top kernels of steps found from the launch period; NVTX steps rank
-- theirs with steps_range_top_kernels). A kernel is in the step whose window holds its start
-- on its device (one ASOF join per kernel, as steps_window_work places every operation), so
-- each kernel counts once: the kernels of one CUDA graph launch traced node by node share a
-- correlation id, and joining the kernels to the steps' work by it counted each of them once
-- per kernel of the graph. The ranking is step_top_kernels (queries/_step_top_kernels.sql).
--
-- Needs the relation step_bounds, as steps_window_work reads it: one window per step and
-- device (device, step, start inclusive, "end" exclusive, ns from session start; pids
-- BIGINT[]: the loop's processes on a device another program used too, NULL: every
-- process's), registered by tracelens.stepwork.
--
-- Parameters:
--   $top  BIGINT  kernels kept per step and device
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter
--
-- Columns (by step, device, rank):
--   step      BIGINT   step number
--   device    BIGINT   CUDA device ordinal
--   rank      BIGINT   1 for the kernel with the most time in the step on the device
--   calls     BIGINT   its launches in the step
--   total_ns  BIGINT   their summed duration, ns
--   time_pct  DOUBLE   share of the step's kernel time on the device, % (one decimal)
--   name      VARCHAR  demangled kernel name
WITH windows AS (
    SELECT device::BIGINT AS device, step::BIGINT AS step, start::BIGINT AS start,
           "end"::BIGINT AS "end", pids::BIGINT[] AS pids
    FROM step_bounds
),
per_kernel AS (
    SELECT w.step, k.deviceId AS device, k.demangledName AS name_id, count(*) AS calls,
           sum(k."end" - k.start) AS total_ns
    FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS k
    ASOF JOIN windows AS w ON k.deviceId = w.device AND k.start >= w.start
    WHERE k.start < w."end" AND (w.pids IS NULL OR list_contains(w.pids, pid_of(k.globalPid)))
    GROUP BY ALL
)
SELECT * FROM step_top_kernels('per_kernel', $top)
ORDER BY step, device, rank
