-- findings_sync_memset: memsets of pinned or managed memory issued by synchronous API calls
-- (names starting with cudaMemset without "async", case-insensitive), as `nsys analyze`
-- 2022.4's cuda-sync-memset rule lists them. Longest first.
--
-- The rows come from issued_memsets (queries/_issued_transfers.sql).
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
SELECT duration_ns, start_ns, memory_kind, bytes_mb, pid, device, context, stream, api_name
FROM issued_memsets('cudaMemset%', $device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
WHERE api_name NOT ILIKE '%async%' AND mem_kind IN (1, 4)
ORDER BY duration_ns DESC, start_ns
