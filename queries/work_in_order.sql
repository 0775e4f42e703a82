-- work_in_order: every GPU operation that passes the event filter (kernels, memcpys,
-- memsets, graph-level CUDA graph replays), with what each analysis of one trace needs
-- from it: util's sweeps (all of it), the step search, the kernel union and the diff's
-- launch sequence (the kernels), and for the diff each kernel's launch grid. One read of a
-- trace serves all of them: on a million launches each extra sorted read costs about a
-- census. Unordered: the caller (tracelens.util.work_in_order, the diff's
-- tracelens.compare.collect) sorts the rows by device, start, stream, end, kind (the
-- kernels alone then are in launch order, as steps_launches lists them); polars sorts them
-- in about half the CPU time DuckDB's ORDER BY took (1M rows: ~0.2 s against ~0.4 s).
--
-- Parameters:
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter (NULL: all; an
--     operation is kept when it ends at or after $start_ns and starts before $end_ns:
--     in_window, nsys's rule)
--   $grid   BOOLEAN  read each kernel's launch grid into blocks (the diff: its census's mean
--     grid, diff_kernels.sql); false: blocks is NULL and DuckDB leaves gridX, gridY and
--     gridZ out of the scan (~0.1 CPU s per million kernels read directly)
--   $short  BOOLEAN  read the kernels' short name ids (short_id); false: short_id is NULL
--     and the column is left out of the scan (the diff by demangled name: ~0.03 CPU s per
--     million kernels)
--
-- Columns:
--   device        BIGINT   CUDA device ordinal
--   stream        BIGINT   CUDA stream id (orders operations that start together)
--   start_ns      BIGINT   start, ns from session start
--   end_ns        BIGINT   end, ns
--   kind          TINYINT  0 kernel, 1 memcpy, 2 memset, 3 graph-level CUDA graph replay
--   name_id       BIGINT   kernels: StringIds id of the demangled name; else NULL
--   short_id      BIGINT   kernels: StringIds id of the short name (NULL unless $short);
--                          else NULL
--   pid           BIGINT   operating-system pid of the launching process
--   correlation_id BIGINT  CUPTI correlation id: with pid, it names the API call that
--                          launched the operation (launched_by in _shared.sql; util looks
--                          it up for the operations that end an idle gap, util_calls.sql)
--   graph_id      BIGINT   graph-level CUDA graph replays: the replayed graph's graphId (the
--                          step search's token for it, as steps_launches gives it); else NULL
--   blocks        BIGINT   kernels: thread blocks of the launch (gridX * gridY * gridZ; NULL
--                          unless $grid, or where the export has no grid); else NULL
WITH work AS (
    SELECT 0::TINYINT AS kind, deviceId, streamId, globalPid, correlationId, start, "end",
           demangledName AS name_id, CASE WHEN $short THEN shortName END AS short_id,
           NULL::BIGINT AS graph_id, CASE WHEN $grid THEN gridX * gridY * gridZ END AS blocks
    FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
    UNION ALL
    SELECT 1::TINYINT, deviceId, streamId, globalPid, correlationId, start, "end", NULL, NULL,
           NULL, NULL
    FROM filtered_memcpys($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
    UNION ALL
    SELECT 2::TINYINT, deviceId, streamId, globalPid, correlationId, start, "end", NULL, NULL,
           NULL, NULL
    FROM filtered_memsets($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
    UNION ALL
    SELECT 3::TINYINT, deviceId, streamId, globalPid, correlationId, start, "end", NULL, NULL,
           graphId, NULL
    FROM filtered_graph_replays($device, $pid, $stream, $start_ns, $end_ns,
                                selection := $selection)
)
SELECT
    w.deviceId::BIGINT AS device,
    w.start::BIGINT AS start_ns,
    w."end"::BIGINT AS end_ns,
    w.streamId::BIGINT AS stream,
    w.kind,
    w.name_id::BIGINT AS name_id,
    w.short_id::BIGINT AS short_id,
    pid_of(w.globalPid)::BIGINT AS pid,
    w.correlationId::BIGINT AS correlation_id,
    w.graph_id::BIGINT AS graph_id,
    w.blocks::BIGINT AS blocks
FROM work AS w
