-- findings_sync_memcpy: memcpys issued by synchronous API calls (names starting with
-- cudaMemcpy without "Async", case-insensitive), as `nsys analyze` 2022.4's
-- cuda-sync-memcpy rule lists them: host-to-device copies of at most 64,000 bytes (which
-- the driver stages and returns from early) and copies within one device are left out.
-- Longest first.
--
-- Parameters: $device, $pid, $stream, $start_ns, $end_ns, $selection (the event filter;
-- NULL: all; $selection: a work_selection id)
--
-- Columns:
--   duration_ns  BIGINT   length of the copy on the GPU, ns
--   start_ns     BIGINT   its start, ns from session start
--   src_kind     VARCHAR  source memory kind (Pageable, Pinned, Device, ...)
--   dst_kind     VARCHAR  destination memory kind
--   bytes_mb     DOUBLE   bytes copied / 10^6
--   pid          BIGINT   process id
--   device       BIGINT   CUDA device ordinal
--   context      BIGINT   CUDA context id
--   stream       BIGINT   CUDA stream id
--   api_name     VARCHAR  the API call that issued it
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
WHERE s.value ILIKE 'cudaMemcpy%' AND s.value NOT ILIKE '%Async%'
  AND NOT (m.bytes <= 64000 AND m.copyKind = 1)
  AND NOT coalesce(m.srcDeviceId = m.dstDeviceId, false)
ORDER BY duration_ns DESC, start_ns
