-- findings_sync_memcpy: memcpys issued by synchronous API calls (names starting with
-- cudaMemcpy without "Async", case-insensitive), as `nsys analyze` 2022.4's
-- cuda-sync-memcpy rule lists them: host-to-device copies of at most 64,000 bytes (which
-- the driver stages and returns from early) and copies within one device are left out.
-- Longest first.
--
-- The rows come from issued_memcpys (queries/_issued_transfers.sql).
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
SELECT duration_ns, start_ns, src_kind, dst_kind, bytes_mb, pid, device, context, stream, api_name
FROM issued_memcpys('cudaMemcpy%', $device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
WHERE api_name NOT ILIKE '%Async%'
  AND NOT (bytes <= 64000 AND copy_kind = 1)
  AND NOT same_device
ORDER BY duration_ns DESC, start_ns
