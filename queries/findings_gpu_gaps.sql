-- findings_gpu_gaps: GPU idle gaps longer than a threshold, per process and device, as
-- `nsys analyze` 2022.4's gpu-starv rule finds them: within the range from a device's first
-- to its last GPU operation of the process (nsys_gpu_ops: kernels, memcpys, memsets and
-- profiler flush overheads), the j-th operation end (in end order) and the (j+1)-th start
-- (in start order) bound a gap when the end comes first. Longest first.
--
-- How: that pairing marks exactly the stretches where no operation of the process runs on
-- the device (the j operations that ended first are all the ones that started), i.e. the
-- gaps of the union of the operations. One pass in start order finds them: an operation
-- that starts after the latest end M of the earlier ones ends the gap [M, start]. The
-- partition is one number per (process, device): DuckDB sorts a window partitioned by one
-- key many times faster than by two.
--
-- Parameters:
--   $gap_ns                         BIGINT  report gaps strictly longer than this, ns
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter (NULL: all;
--                                   $selection: a work_selection id)
--
-- Columns:
--   duration_ns  BIGINT  length of the gap, ns
--   start_ns     BIGINT  start of the gap (end of the operation before it), ns from session
--                        start
--   pid          BIGINT  process id
--   device       BIGINT  CUDA device ordinal
--   context      BIGINT  CUDA context id of the operation before the gap
WITH ops AS (
    SELECT start, "end", process_id AS pid, deviceId, contextId,
           process_id * 1048576 + deviceId AS part
    FROM nsys_gpu_ops($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
),
swept AS (
    SELECT part, start, pid, deviceId, max("end") OVER earlier AS gap_start
    FROM ops
    WINDOW earlier AS (PARTITION BY part ORDER BY start, "end"
                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
),
gaps AS (
    SELECT * FROM swept WHERE start - gap_start > $gap_ns
)
-- The operation before a gap is the one that ends where the gap starts (the smallest
-- context among several).
SELECT
    g.start - g.gap_start AS duration_ns,
    g.gap_start AS start_ns,
    g.pid,
    g.deviceId AS device,
    min(o.contextId) AS context
FROM gaps AS g
JOIN ops AS o ON o.part = g.part AND o."end" = g.gap_start
GROUP BY ALL
ORDER BY duration_ns DESC, start_ns
