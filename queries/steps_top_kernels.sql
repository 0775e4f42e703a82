-- steps_top_kernels: per step and device, the kernels with the most GPU time in that step
-- (tracelens steps' top kernels). Needs the temp table step_work (globalPid, correlationId,
-- step: the GPU work of each step, from steps_range_work or steps_window_work), filled by
-- tracelens.steps. The ranking is step_top_kernels (queries/_step_top_kernels.sql).
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
WITH per_kernel AS (
    SELECT w.step, k.deviceId AS device, k.demangledName AS name_id, count(*) AS calls,
           sum(k."end" - k.start) AS total_ns
    FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS k
    JOIN step_work AS w ON w.globalPid = k.globalPid AND w.correlationId = k.correlationId
    GROUP BY ALL
)
SELECT * FROM step_top_kernels('per_kernel', $top)
ORDER BY step, device, rank
