-- steps_host_gaps: for each call that launched a kernel or a graph-level CUDA graph replay
-- on one device, the time its host thread spent outside the launch calls of that device
-- before it: the call's start minus the end of the thread's previous such call. Where an
-- iteration starts, the host has synced, logged or prepared the next batch, so this gap is
-- long there and short between the launches inside a step; tracelens.steps_period asks for
-- it to phase the period's steps when the GPU's idle time before the launches does not
-- tell (a GPU-bound loop whose queue never drains: the GPU idles a few microseconds before
-- every launch alike).
--
-- Parameters:
--   $device                                          the device (CUDA ordinal)
--   $pid, $stream, $start_ns, $end_ns, $selection    the rest of the event filter
--
-- Columns:
--   correlation_id  BIGINT  CUPTI correlation id of the launching call (unique per process:
--                           the caller gives up when two processes launched on the device)
--   pid             BIGINT  operating-system pid of the launching process
--   gap_ns          BIGINT  the call's start minus the end of its thread's previous launch
--                           call for this device, ns (clipped at 0); NULL for a thread's
--                           first
WITH launches AS (
    SELECT globalPid, correlationId
    FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
    UNION
    SELECT globalPid, correlationId
    FROM filtered_graph_replays($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
),
calls AS (
    -- a launch's runtime call; a driver call of the same correlation id runs inside it,
    -- so the earliest-starting one is kept (arg_min: one row per launch)
    SELECT pid_of(r.globalTid) AS pid, r.correlationId AS correlation_id,
           arg_min(r.globalTid, r.start) AS global_tid, min(r.start) AS start_ns,
           arg_min(r."end", r.start) AS end_ns
    FROM runtime_calls AS r
    SEMI JOIN launches AS l ON launched_by(l.globalPid, l.correlationId, r.globalTid, r.correlationId)
    GROUP BY ALL
)
SELECT correlation_id, pid,
       -- greatest() would turn a thread's first call's NULL into 0: no pause is known there
       CASE WHEN gap_ns < 0 THEN 0 ELSE gap_ns END AS gap_ns
FROM (
    SELECT correlation_id, pid,
           start_ns - lag(end_ns) OVER (PARTITION BY global_tid ORDER BY start_ns, correlation_id) AS gap_ns
    FROM calls
)
ORDER BY pid, correlation_id
