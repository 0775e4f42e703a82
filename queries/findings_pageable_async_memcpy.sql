-- findings_pageable_async_memcpy: asynchronous memcpys (API names cudaMemcpy...Async...,
-- case-insensitive) from or to pageable host memory, which the driver performs
-- synchronously through a staging buffer, as `nsys analyze` 2022.4's cuda-async-memcpy
-- rule lists them. Longest first.
--
-- The rows come from issued_memcpys (queries/_issued_transfers.sql).
--
-- Parameters: $device, $pid, $stream, $start_ns, $end_ns, $selection (the event filter;
-- NULL: all; $selection: a work_selection id)
--
-- Columns: as findings_sync_memcpy (duration_ns, start_ns, src_kind, dst_kind, bytes_mb,
-- pid, device, context, stream, api_name)
SELECT duration_ns, start_ns, src_kind, dst_kind, bytes_mb, pid, device, context, stream, api_name
FROM issued_memcpys('cudaMemcpy%Async%', $device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
WHERE src_mem_kind = 0 OR dst_mem_kind = 0
ORDER BY duration_ns DESC, start_ns
