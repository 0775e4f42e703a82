-- util_devices: what each device did with the wall time of the analysis window [$t0, $t1]:
-- the union of every GPU operation of the device (kernels, memcpys, memsets, graph-level
-- CUDA graph replays) across streams, clipped to the window, and of each class of work.
-- Busy time is split by what runs, in this priority: compute, then communication, then
-- memory; so compute_ns + exposed_communication_ns + exposed_memory_ns = busy_ns and
-- busy_ns + idle_ns = span_ns exactly. Idle time is split by cause (below); the causes add
-- up to idle_ns exactly. One row per device with GPU work in the window, by device.
--
-- How: one pass over the operations in start order per device. With M the latest end of the
-- earlier operations of a set, an operation adds max(0, end - max(start, M)) to the union of
-- that set, so five running maxima give the unions of compute (C), communication (N),
-- memory, C+N and all; exposed communication is |C+N| - |C|, exposed memory |all| - |C+N|.
-- An operation that starts after M of all operations ends an idle gap [M, start].
--
-- Parameters:
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter (NULL: all);
--                               an operation is kept when it overlaps [$start_ns, $end_ns]
--   $t0, $t1           BIGINT     the analysis window, ns from session start (required)
--   $name_ids          BIGINT[]   demangled kernel-name ids that are not compute ...
--   $work_classes      VARCHAR[]  ... and their class, 'communication' or 'memory' (same
--                                 length); other kernels and graph replays are compute,
--                                 memcpys and memsets are memory
--   $sync_regex        VARCHAR    CUDA API names (full match) that block the host until GPU
--                                 work is done
--
-- Columns (times in ns):
--   device                     BIGINT  CUDA device ordinal
--   span_ns                    BIGINT  $t1 - $t0
--   busy_ns                    BIGINT  union of all operations of the device
--   idle_ns                    BIGINT  span_ns - busy_ns
--   compute_ns                 BIGINT  time some compute kernel runs
--   communication_ns           BIGINT  time some communication kernel runs
--   exposed_communication_ns   BIGINT  ... and no compute kernel runs
--   memory_ns                  BIGINT  time some memcpy, memset or copy kernel runs
--   exposed_memory_ns          BIGINT  ... and neither compute nor communication runs
--   utilization                DOUBLE  busy_ns / span_ns (0..1; NULL for an empty window)
--   first_ns, last_ns          BIGINT  first start and last end of the device's work
--   before_first_ns            BIGINT  idle from $t0 to first_ns
--   after_last_ns              BIGINT  idle from last_ns to $t1
--   sync_ns, sync_gaps         BIGINT  idle gaps whose next operations were all launched
--                                      (API call start) after the gap began, while the
--                                      launching process was blocked in a synchronizing API
--                                      call ($sync_regex) overlapping the gap: time, gaps
--   launch_bound_ns, launch_bound_gaps  BIGINT  the other gaps whose next operations were
--                                      launched after the gap began: the GPU waited for
--                                      the host
--   unexplained_ns, unexplained_gaps    BIGINT  the remaining gaps (the next work was
--                                      queued: a dependency, an event wait, the scheduler)
WITH classes AS (
    SELECT unnest($name_ids::BIGINT[]) AS name_id,
           CASE unnest($work_classes::VARCHAR[]) WHEN 'communication' THEN 1 ELSE 2 END AS cls
),
-- cls: 0 compute, 1 communication, 2 memory.
-- launch_start: when the host began the API call that launched the operation (NULL when
-- the trace does not show it).
ops AS (
    SELECT
        w.deviceId AS device,
        greatest(w.start, $t0) AS s,
        least(w."end", $t1) AS e,
        CASE WHEN w.kind IN ('memcpy', 'memset') THEN 2 ELSE coalesce(c.cls, 0) END::TINYINT AS cls,
        pid_of(w.globalPid) AS pid,
        r.start AS launch_start
    FROM gpu_work($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS w
    LEFT JOIN classes AS c ON c.name_id = w.name_id
    LEFT JOIN runtime_calls AS r
        ON launched_by(w.globalPid, w.correlationId, r.globalTid, r.correlationId)
    WHERE least(w."end", $t1) > greatest(w.start, $t0)
),
-- Operations that start together are peers in start order (their order among themselves
-- does not change the unions); next_launch and next_pid: the earliest launch and the
-- smallest process among the operations that start when this one does.
swept AS (
    SELECT
        device, s, e, cls,
        max(e) OVER earlier AS m_all,
        max(e) FILTER (WHERE cls = 0) OVER earlier AS m_c,
        max(e) FILTER (WHERE cls = 1) OVER earlier AS m_n,
        max(e) FILTER (WHERE cls = 2) OVER earlier AS m_m,
        max(e) FILTER (WHERE cls <= 1) OVER earlier AS m_cn,
        min(launch_start) OVER peers AS next_launch,
        min(pid) OVER peers AS next_pid
    FROM ops
    WINDOW earlier AS (PARTITION BY device ORDER BY s
                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
           peers AS (PARTITION BY device ORDER BY s RANGE BETWEEN CURRENT ROW AND CURRENT ROW)
),
sweep AS (
    SELECT
        device,
        min(s) AS first_ns,
        max(e) AS last_ns,
        sum(greatest(0, e - greatest(s, coalesce(m_all, s)))) AS busy_ns,
        sum(greatest(0, e - greatest(s, coalesce(m_c, s)))) FILTER (WHERE cls = 0) AS c_ns,
        sum(greatest(0, e - greatest(s, coalesce(m_n, s)))) FILTER (WHERE cls = 1) AS n_ns,
        sum(greatest(0, e - greatest(s, coalesce(m_m, s)))) FILTER (WHERE cls = 2) AS m_ns,
        sum(greatest(0, e - greatest(s, coalesce(m_cn, s)))) FILTER (WHERE cls <= 1) AS cn_ns
    FROM swept
    GROUP BY device
),
-- An operation that starts after every earlier one ended ends an idle gap; with it, the
-- operations that start at the same time and when the host began to launch them.
next_work AS (
    SELECT device, m_all AS gap_start, s AS gap_end, next_launch AS launch_start,
           next_pid AS pid
    FROM swept
    WHERE s > m_all
),
sync_calls AS (
    SELECT pid_of(r.globalTid) AS pid, r.start, r."end"
    FROM runtime_calls AS r
    WHERE r.nameId IN (SELECT id FROM strings WHERE regexp_full_match(value, $sync_regex))
),
-- A gap whose next work the host launched only after the gap began is the host's doing:
-- 'sync' when the host was blocked in a synchronizing call during the gap (the first such
-- call of the process to end after the gap began, if it started before the gap ended),
-- else 'launch_bound'. Work queued before the gap began waited on something else
-- ('unexplained'); only the host's gaps are looked up among the sync calls.
host_gaps AS (
    SELECT * FROM next_work WHERE coalesce(launch_start > gap_start, false)
),
gap_causes AS (
    SELECT device, gap_end - gap_start AS len, 'unexplained' AS cause
    FROM next_work
    WHERE NOT coalesce(launch_start > gap_start, false)
    UNION ALL
    SELECT
        n.device,
        n.gap_end - n.gap_start,
        CASE WHEN sc.start IS NOT NULL AND sc.start < n.gap_end THEN 'sync' ELSE 'launch_bound' END
    FROM host_gaps AS n
    ASOF LEFT JOIN sync_calls AS sc ON sc.pid = n.pid AND sc."end" >= n.gap_start
),
idle AS (
    SELECT
        device,
        coalesce(sum(len) FILTER (WHERE cause = 'sync'), 0) AS sync_ns,
        count(*) FILTER (WHERE cause = 'sync') AS sync_gaps,
        coalesce(sum(len) FILTER (WHERE cause = 'launch_bound'), 0) AS launch_bound_ns,
        count(*) FILTER (WHERE cause = 'launch_bound') AS launch_bound_gaps,
        coalesce(sum(len) FILTER (WHERE cause = 'unexplained'), 0) AS unexplained_ns,
        count(*) FILTER (WHERE cause = 'unexplained') AS unexplained_gaps
    FROM gap_causes
    GROUP BY device
)
SELECT
    s.device,
    ($t1 - $t0)::BIGINT AS span_ns,
    s.busy_ns::BIGINT AS busy_ns,
    ($t1 - $t0 - s.busy_ns)::BIGINT AS idle_ns,
    coalesce(s.c_ns, 0)::BIGINT AS compute_ns,
    coalesce(s.n_ns, 0)::BIGINT AS communication_ns,
    (coalesce(s.cn_ns, 0) - coalesce(s.c_ns, 0))::BIGINT AS exposed_communication_ns,
    coalesce(s.m_ns, 0)::BIGINT AS memory_ns,
    (s.busy_ns - coalesce(s.cn_ns, 0))::BIGINT AS exposed_memory_ns,
    CASE WHEN $t1 > $t0 THEN s.busy_ns / ($t1 - $t0) END AS utilization,
    s.first_ns::BIGINT AS first_ns,
    s.last_ns::BIGINT AS last_ns,
    (s.first_ns - $t0)::BIGINT AS before_first_ns,
    ($t1 - s.last_ns)::BIGINT AS after_last_ns,
    coalesce(i.sync_ns, 0)::BIGINT AS sync_ns,
    coalesce(i.sync_gaps, 0)::BIGINT AS sync_gaps,
    coalesce(i.launch_bound_ns, 0)::BIGINT AS launch_bound_ns,
    coalesce(i.launch_bound_gaps, 0)::BIGINT AS launch_bound_gaps,
    coalesce(i.unexplained_ns, 0)::BIGINT AS unexplained_ns,
    coalesce(i.unexplained_gaps, 0)::BIGINT AS unexplained_gaps
FROM sweep AS s
LEFT JOIN idle AS i USING (device)
ORDER BY s.device
