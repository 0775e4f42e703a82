-- Probe of queries/_shared.sql's gpu_work (and through it filtered_kernels, _memcpys,
-- _memsets, _graph_replays and in_selection): the GPU operations that pass the filter.
SELECT kind, deviceId, streamId, pid_of(globalPid) AS pid, correlationId, start, "end",
       name_id
FROM gpu_work($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
ORDER BY start
