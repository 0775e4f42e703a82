-- launches_per_device: kernel launches per device (the alignment in diff compares at most
-- the first few thousand of them, and says how many there were in all).
-- Parameters: $start_ns, $end_ns BIGINT or NULL (time window, nsys rule).
-- Columns:
--   device    BIGINT  CUDA device ordinal
--   launches  BIGINT  kernel launches on it
SELECT deviceId AS device, count(*) AS launches
FROM kernels
WHERE ($start_ns IS NULL OR "end" >= $start_ns) AND ($end_ns IS NULL OR start <= $end_ns)
GROUP BY deviceId
ORDER BY deviceId
