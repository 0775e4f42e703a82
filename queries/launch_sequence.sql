-- launch_sequence: every kernel launch in time order per device, as name ids, for aligning
-- the launch sequences of two runs.
-- Parameters:
--   $name_kind          VARCHAR  'short' | 'demangled'
--   $start_ns, $end_ns  BIGINT or NULL (time window, nsys rule)
--   $limit              BIGINT   at most this many launches per device (the earliest)
-- Columns:
--   device    BIGINT   CUDA device ordinal
--   seq       BIGINT   0-based position of the launch on its device (by start, then stream)
--   name      VARCHAR  kernel name of the requested kind
WITH k AS (
    SELECT
        deviceId AS device,
        row_number() OVER (PARTITION BY deviceId ORDER BY start, streamId, "end") - 1 AS seq,
        CASE $name_kind WHEN 'short' THEN shortName ELSE demangledName END AS name_id
    FROM kernels
    WHERE ($start_ns IS NULL OR "end" >= $start_ns) AND ($end_ns IS NULL OR start <= $end_ns)
)
SELECT k.device, k.seq, s.value AS name
FROM k JOIN strings AS s ON s.id = k.name_id
WHERE k.seq < $limit
ORDER BY k.device, k.seq
