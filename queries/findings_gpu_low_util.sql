-- findings_gpu_low_util: time regions of low GPU utilization, as `nsys analyze` 2022.4's
-- gpu-low-util rule computes them: each process/device range (first to last operation of
-- nsys_gpu_ops) is cut into $chunks chunks of ceil(range / $chunks) ns (the last one clipped
-- to the range); a chunk's in-use percentage is the summed overlap of the operations with
-- it over its length (concurrent operations add up, so it can exceed 100); chunks below
-- $threshold_pct are kept and consecutive ones coalesced, with the length-weighted average.
-- Lowest utilization first.
--
-- Parameters:
--   $chunks         BIGINT  number of chunks per process and device (nsys: 1..1000)
--   $threshold_pct  DOUBLE  keep chunks whose in-use percentage is below this
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter (NULL: all;
--                                   $selection: a work_selection id)
--
-- Columns:
--   in_use_pct   DOUBLE  weighted average in-use percentage, rounded to 0.1
--   duration_ns  BIGINT  length of the (coalesced) region, ns
--   start_ns     BIGINT  start of the region, ns from session start
--   pid          BIGINT  process id
--   device       BIGINT  CUDA device ordinal
--   context      BIGINT  CUDA context id (the smallest of the device's operations)
WITH ops AS (
    SELECT start, "end", process_id AS pid, deviceId, contextId
    FROM nsys_gpu_ops($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
),
ranges AS (
    SELECT pid, deviceId, min(contextId) AS contextId, min(start) AS range_start,
           max("end") AS range_end, ceil((max("end") - min(start))::DOUBLE / $chunks) AS size
    FROM ops
    GROUP BY pid, deviceId
),
chunks AS (
    SELECT r.pid, r.deviceId, r.contextId, c.i AS chunk,
           r.range_start + c.i * r.size AS chunk_start,
           least(r.range_start + (c.i + 1) * r.size, r.range_end) AS chunk_end
    FROM ranges AS r, range(0, $chunks) AS c(i)
    WHERE r.range_start + c.i * r.size < least(r.range_start + (c.i + 1) * r.size, r.range_end)
),
-- Each operation against the chunks it overlaps: most lie inside one chunk and are summed
-- directly; only those that cross a chunk boundary are cut (unnest), so nothing is joined
-- per operation. Linear, no range join.
placed AS (
    SELECT o.pid, o.deviceId, o.start, o."end", r.range_start, r.size,
           floor((o.start - r.range_start) / r.size)::BIGINT AS first_chunk,
           least(floor((o."end" - r.range_start) / r.size)::BIGINT, $chunks - 1) AS last_chunk
    FROM ops AS o
    JOIN ranges AS r ON r.pid = o.pid AND r.deviceId = o.deviceId
),
inside AS (
    SELECT pid, deviceId, first_chunk AS chunk, sum("end" - start) AS used_ns
    FROM placed
    WHERE first_chunk = last_chunk
    GROUP BY pid, deviceId, first_chunk
),
pieces AS (
    SELECT pid, deviceId, start, "end", unnest(range(first_chunk, last_chunk + 1)) AS chunk
    FROM placed
    WHERE first_chunk < last_chunk
),
crossing AS (
    SELECT c.pid, c.deviceId, c.chunk,
           sum(least(p."end", c.chunk_end) - greatest(p.start, c.chunk_start)) AS used_ns
    FROM pieces AS p
    JOIN chunks AS c ON c.pid = p.pid AND c.deviceId = p.deviceId AND c.chunk = p.chunk
    WHERE p.start < c.chunk_end AND p."end" > c.chunk_start
    GROUP BY c.pid, c.deviceId, c.chunk
),
used AS (
    SELECT pid, deviceId, chunk, sum(used_ns) AS used_ns
    FROM (SELECT * FROM inside UNION ALL SELECT * FROM crossing)
    GROUP BY pid, deviceId, chunk
),
low AS (
    SELECT c.*, c.chunk_end - c.chunk_start AS len,
           coalesce(u.used_ns, 0) / (c.chunk_end - c.chunk_start) * 100 AS pct
    FROM chunks AS c
    LEFT JOIN used AS u USING (pid, deviceId, chunk)
    WHERE coalesce(u.used_ns, 0) / (c.chunk_end - c.chunk_start) * 100 < $threshold_pct
),
grouped AS (
    SELECT *, chunk - row_number() OVER (PARTITION BY pid, deviceId ORDER BY chunk) AS run
    FROM low
)
SELECT
    round(sum(len * pct) / sum(len), 1) AS in_use_pct,
    (max(chunk_end) - min(chunk_start))::BIGINT AS duration_ns,
    min(chunk_start)::BIGINT AS start_ns,
    pid,
    deviceId AS device,
    min(contextId) AS context
FROM grouped
GROUP BY pid, deviceId, run
ORDER BY in_use_pct, duration_ns, start_ns
