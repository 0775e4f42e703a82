-- util_ops: every GPU operation of the analysis window [$t0, $t1] (kernels, memcpys,
-- memsets, graph-level CUDA graph replays), clipped to the window, with its class of work
-- and when the host began to launch it; by device, then start (then end). The input of the util
-- sweeps (tracelens.util_sweep), which run over these rows in vectorized polars: DuckDB 1.5
-- runs the running maxima they need as framed window aggregates, 10-20x slower.
--
-- Parameters:
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter (NULL: all);
--                               an operation is kept when it overlaps [$start_ns, $end_ns]
--   $t0, $t1           BIGINT     the analysis window, ns from session start (required)
--   $name_ids          BIGINT[]   demangled kernel-name ids that are not compute ...
--   $work_classes      VARCHAR[]  ... their class, 'communication' or 'memory' ...
--   $collective_ids    INTEGER[]  ... and collective kind: 1 + its index in the sorted
--                                 distinct kinds of the trace, 0 where not communication
--                                 (same length)
--
-- Columns:
--   device        BIGINT   CUDA device ordinal
--   s, e          BIGINT   start and end clipped to the window, ns (e > s)
--   cls           TINYINT  0 compute (other kernels, graph replays), 1 communication,
--                          2 memory (memcpys, memsets, copy kernels)
--   collective    INTEGER  communication kernels: their $collective_ids entry; else 0
--   pid           BIGINT   operating-system pid of the launching process
--   launch_start  BIGINT   start of the API call that launched it, ns (NULL when the trace
--                          does not show it)
WITH classes AS (
    SELECT unnest($name_ids::BIGINT[]) AS name_id,
           CASE unnest($work_classes::VARCHAR[]) WHEN 'communication' THEN 1 ELSE 2 END::TINYINT
               AS cls,
           unnest($collective_ids::INTEGER[]) AS collective
)
SELECT
    w.deviceId AS device,
    greatest(w.start, $t0)::BIGINT AS s,
    least(w."end", $t1)::BIGINT AS e,
    CASE WHEN w.kind IN ('memcpy', 'memset') THEN 2 ELSE coalesce(c.cls, 0) END::TINYINT AS cls,
    CASE WHEN w.kind IN ('memcpy', 'memset') THEN 0 ELSE coalesce(c.collective, 0) END::INTEGER
        AS collective,
    pid_of(w.globalPid) AS pid,
    r.start AS launch_start
FROM gpu_work($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS w
LEFT JOIN classes AS c ON c.name_id = w.name_id
LEFT JOIN runtime_calls AS r
    ON launched_by(w.globalPid, w.correlationId, r.globalTid, r.correlationId)
WHERE least(w."end", $t1) > greatest(w.start, $t0)
ORDER BY device, s, e, cls, collective, launch_start
