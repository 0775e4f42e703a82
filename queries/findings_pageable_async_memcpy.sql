-- findings_pageable_async_memcpy: asynchronous memcpys (API names cudaMemcpy...Async...,
-- case-insensitive) from or to pageable host memory, which the driver performs
-- synchronously through a staging buffer, as `nsys analyze` 2022.4's cuda-async-memcpy
-- rule lists them. Longest first.
--
-- Parameters: $device, $pid, $stream, $start_ns, $end_ns, $selection (the event filter;
-- NULL: all; $selection: a work_selection id)
--
-- Columns: as findings_sync_memcpy (duration_ns, start_ns, src_kind, dst_kind, bytes_mb,
-- pid, device, context, stream, api_name)
SELECT
    m."end" - m.start AS duration_ns,
    m.start AS start_ns,
    mem_kind_name(m.srcKind) AS src_kind,
    mem_kind_name(m.dstKind) AS dst_kind,
    m.bytes / 1e6 AS bytes_mb,
    pid_of(m.globalPid) AS pid,
    m.deviceId AS device,
    m.contextId AS context,
    m.streamId AS stream,
    s.value AS api_name
FROM filtered_memcpys($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS m
JOIN runtime_calls AS r ON launched_by(m.globalPid, m.correlationId, r.globalTid, r.correlationId)
JOIN strings AS s ON s.id = r.nameId
WHERE s.value ILIKE 'cudaMemcpy%Async%' AND (m.srcKind = 0 OR m.dstKind = 0)
ORDER BY duration_ns DESC, start_ns
