-- findings_sync_memset: memsets of pinned or managed memory issued by synchronous API calls
-- (names starting with cudaMemset without "async", case-insensitive), as `nsys analyze`
-- 2022.4's cuda-sync-memset rule lists them. Longest first.
--
-- Parameters: $device, $pid, $stream, $start_ns, $end_ns, $selection (the event filter;
-- NULL: all; $selection: a work_selection id)
--
-- Columns:
--   duration_ns  BIGINT   length of the memset on the GPU, ns
--   start_ns     BIGINT   its start, ns from session start
--   memory_kind  VARCHAR  memory kind set (Pinned or Managed)
--   bytes_mb     DOUBLE   bytes set / 10^6
--   pid          BIGINT   process id
--   device       BIGINT   CUDA device ordinal
--   context      BIGINT   CUDA context id
--   stream       BIGINT   CUDA stream id
--   api_name     VARCHAR  the API call that issued it
SELECT
    m."end" - m.start AS duration_ns,
    m.start AS start_ns,
    mem_kind_name(m.memKind) AS memory_kind,
    m.bytes / 1e6 AS bytes_mb,
    pid_of(m.globalPid) AS pid,
    m.deviceId AS device,
    m.contextId AS context,
    m.streamId AS stream,
    s.value AS api_name
FROM filtered_memsets($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS m
JOIN runtime_calls AS r ON launched_by(m.globalPid, m.correlationId, r.globalTid, r.correlationId)
JOIN strings AS s ON s.id = r.nameId
WHERE s.value ILIKE 'cudaMemset%' AND s.value NOT ILIKE '%async%'
  AND m.memKind IN (1, 4)
ORDER BY duration_ns DESC, start_ns
