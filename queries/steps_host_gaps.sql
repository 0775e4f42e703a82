-- steps_host_gaps: for each call that launched a kernel or a graph-level CUDA graph replay
-- that passes the filter (one device's, in a window of its launches: the steps' phase is
-- judged on a sample of them), the time its host thread spent outside these launch calls
-- before it: the call's start minus the end of the thread's previous such call. Where an
-- iteration starts, the host has synced, logged or prepared the next batch, so this gap is
-- long there and short between the launches inside a step; tracelens.steps_phase asks for
-- it to phase a period's steps when the GPU's idle time before the launches does not tell
-- (a GPU-bound loop whose queue never drains: the GPU idles a few microseconds before
-- every launch alike).
--
-- Parameters: $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter;
--   the calls read are those that start before $end_ns (a call starts before the work it
--   launched starts). On the bench trace's 5M launches, every device's calls in one pass
--   cost 3.7 CPU s cached, 7.6 direct; a window of 1,000 launches 0.04 s cached, 2.55
--   direct (the scan of both tables)
--
-- Columns (by pid, correlation id, start):
--   correlation_id  BIGINT  CUPTI correlation id of the launching call (unique per process:
--                           the caller gives up when two processes launched on the device)
--   pid             BIGINT  operating-system pid of the launching process
--   tid             BIGINT  operating-system tid of the launching host thread (the caller
--                           keeps the busiest thread's pauses: a side thread's are not the
--                           loop's)
--   start_ns        BIGINT  the call's start, ns from session start
--   gap_ns          BIGINT  the call's start minus the end of its thread's previous launch
--                           call here, ns (clipped at 0: a call inside the previous one);
--                           NULL for a thread's first
--
-- A driver call of the same correlation id runs inside the runtime call (its gap is 0: it
-- starts after the runtime call's start, which the window orders first): the caller keeps
-- each call's first row.
WITH launches AS (
    SELECT globalPid, correlationId
    FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
    UNION ALL
    SELECT globalPid, correlationId
    FROM filtered_graph_replays($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
),
calls AS (
    SELECT pid_of(r.globalTid) AS pid, r.correlationId AS correlation_id,
           r.globalTid AS global_tid, r.start AS start_ns, r."end" AS end_ns
    FROM runtime_calls AS r
    -- a semi join: the kernels of one CUDA graph launch share its call
    SEMI JOIN launches AS l ON launched_by(l.globalPid, l.correlationId, r.globalTid, r.correlationId)
    WHERE $end_ns IS NULL OR r.start < $end_ns
)
SELECT correlation_id, pid, tid, start_ns,
       -- greatest() would turn a thread's first call's NULL into 0: no pause is known there
       CASE WHEN gap_ns < 0 THEN 0 ELSE gap_ns END AS gap_ns
FROM (
    SELECT correlation_id, pid, tid_of(global_tid) AS tid, start_ns,
           start_ns - lag(end_ns) OVER (PARTITION BY global_tid ORDER BY start_ns, end_ns DESC) AS gap_ns
    FROM calls
)
ORDER BY pid, correlation_id, start_ns
