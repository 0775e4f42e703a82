-- util_communication: communication kernels per device and collective kind (AllReduce,
-- AllGather, ...), and how much of their time no compute kernel hid: a sweep per (device,
-- collective) over that collective's kernels and the device's compute work (kernels that
-- are neither communication nor memory, and graph-level CUDA graph replays), clipped to
-- the analysis window [$t0, $t1]. One row per device and collective, by device, then time.
--
-- Parameters: as util_devices ($device, $pid, $stream, $start_ns, $end_ns, $selection, $t0,
-- $t1, $name_ids, $work_classes), plus
--   $collectives  VARCHAR[]  the collective kind of each of $name_ids (NULL where the name is
--                            not communication, 'other' where no collective rule matched)
--
-- Columns:
--   device       BIGINT   CUDA device ordinal
--   collective   VARCHAR  collective kind
--   calls        BIGINT   kernels of that kind
--   time_ns      BIGINT   sum of their durations inside the window, ns
--   busy_ns      BIGINT   union of their intervals, ns
--   exposed_ns   BIGINT   part of busy_ns with no compute kernel running on the device, ns
WITH classes AS (
    SELECT unnest($name_ids::BIGINT[]) AS name_id, unnest($work_classes::VARCHAR[]) AS work_class,
           unnest($collectives::VARCHAR[]) AS collective
),
ops AS (
    SELECT
        w.deviceId AS device,
        greatest(w.start, $t0) AS s,
        least(w."end", $t1) AS e,
        CASE WHEN w.kind IN ('memcpy', 'memset') THEN 'memory'
             ELSE coalesce(c.work_class, 'compute') END AS work_class,
        c.collective
    FROM gpu_work($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS w
    LEFT JOIN classes AS c ON c.name_id = w.name_id
    WHERE least(w."end", $t1) > greatest(w.start, $t0)
),
comm AS (
    SELECT device, coalesce(collective, 'other') AS collective, s, e
    FROM ops
    WHERE work_class = 'communication'
),
kinds AS (SELECT DISTINCT device, collective FROM comm),
points AS (
    SELECT device, collective, s AS t, 1 AS d_comm, 0 AS d_compute FROM comm
    UNION ALL
    SELECT device, collective, e, -1, 0 FROM comm
    UNION ALL
    SELECT o.device, k.collective, o.s, 0, 1
    FROM ops AS o JOIN kinds AS k ON k.device = o.device
    WHERE o.work_class = 'compute'
    UNION ALL
    SELECT o.device, k.collective, o.e, 0, -1
    FROM ops AS o JOIN kinds AS k ON k.device = o.device
    WHERE o.work_class = 'compute'
),
deltas AS (
    SELECT device, collective, t, sum(d_comm) AS d_comm, sum(d_compute) AS d_compute
    FROM points
    GROUP BY device, collective, t
),
levels AS (
    SELECT
        device,
        collective,
        lead(t) OVER (PARTITION BY device, collective ORDER BY t) - t AS len,
        sum(d_comm) OVER running AS n_comm,
        sum(d_compute) OVER running AS n_compute
    FROM deltas
    WINDOW running AS (PARTITION BY device, collective ORDER BY t ROWS UNBOUNDED PRECEDING)
),
overlap AS (
    SELECT
        device,
        collective,
        coalesce(sum(len) FILTER (WHERE n_comm > 0), 0) AS busy_ns,
        coalesce(sum(len) FILTER (WHERE n_comm > 0 AND n_compute = 0), 0) AS exposed_ns
    FROM levels
    WHERE len IS NOT NULL
    GROUP BY device, collective
),
totals AS (
    SELECT device, collective, count(*) AS calls, sum(e - s) AS time_ns
    FROM comm
    GROUP BY device, collective
)
SELECT
    t.device,
    t.collective,
    t.calls,
    t.time_ns::BIGINT AS time_ns,
    o.busy_ns::BIGINT AS busy_ns,
    o.exposed_ns::BIGINT AS exposed_ns
FROM totals AS t
JOIN overlap AS o USING (device, collective)
ORDER BY t.device, t.time_ns DESC, t.collective
