-- findings_gpu_gaps: GPU idle gaps longer than a threshold, per process and device, as
-- `nsys analyze` 2022.4's gpu-starv rule finds them: within the range from a device's first
-- to its last GPU operation of the process (nsys_gpu_ops: kernels, memcpys, memsets and
-- profiler flush overheads), the j-th operation end (in end order) and the (j+1)-th start
-- (in start order) bound a gap when the end comes first. Longest first.
--
-- Parameters:
--   $gap_ns                         BIGINT  report gaps strictly longer than this, ns
--   $device, $pid, $stream, $start_ns, $end_ns  the event filter (NULL: all)
--
-- Columns:
--   duration_ns  BIGINT  length of the gap, ns
--   start_ns     BIGINT  start of the gap (end of the operation before it), ns from session
--                        start
--   pid          BIGINT  process id
--   device       BIGINT  CUDA device ordinal
--   context      BIGINT  CUDA context id of the operation before the gap
WITH ops AS (
    SELECT start, "end", process_id AS pid, deviceId, contextId
    FROM nsys_gpu_ops($device, $pid, $stream, $start_ns, $end_ns)
),
starts AS (
    SELECT row_number() OVER (ORDER BY pid, deviceId, start) AS rn, start, pid, deviceId
    FROM ops
),
ends AS (
    SELECT row_number() OVER (ORDER BY pid, deviceId, "end") AS rn, "end", pid, deviceId,
           contextId
    FROM ops
)
SELECT
    s.start - e."end" AS duration_ns,
    e."end" AS start_ns,
    e.pid,
    e.deviceId AS device,
    e.contextId AS context
FROM starts AS s
JOIN ends AS e ON s.rn - 1 = e.rn AND s.deviceId = e.deviceId AND s.pid = e.pid
WHERE s.start - e."end" > $gap_ns AND e."end" < s.start
ORDER BY duration_ns DESC, start_ns
