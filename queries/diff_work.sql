-- diff_work: every GPU operation of one side of a diff that passes the event filter, as
-- work_in_order.sql lists them (same rows, same columns), plus each kernel's launch grid.
-- The diff reads the GPU work once and takes everything of the kernels from it: util's
-- sweeps, the step search, the launch sequences and (diff_kernels.sql, over these rows)
-- the census with the mean grid; reading the grid here costs ~0.04 CPU s per million
-- launches, a second scan of the kernel table for it ~0.35 s. Unordered: the caller
-- (tracelens.compare.collect) sorts the rows as tracelens.util.work_in_order does.
--
-- Parameters: $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter
--   (NULL: all; an operation is kept when it starts in, ends in or spans the window)
--
-- Columns: work_in_order.sql's (device, start_ns, end_ns, stream BIGINT; kind TINYINT:
--   0 kernel, 1 memcpy, 2 memset, 3 graph-level CUDA graph replay; name_id, short_id,
--   pid, correlation_id, graph_id BIGINT), then
--   blocks        BIGINT   kernels: thread blocks of the launch (gridX * gridY * gridZ;
--                          NULL where the export has no grid); else NULL
WITH work AS (
    SELECT 0::TINYINT AS kind, deviceId, streamId, globalPid, correlationId, start, "end",
           demangledName AS name_id, shortName AS short_id, NULL::BIGINT AS graph_id,
           gridX * gridY * gridZ AS blocks
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
