-- _issued_transfers: the memcpys and memsets that pass the event filter and were issued by
-- a CUDA API call whose name matches a pattern, in the row shape the findings rules
-- (findings_sync_memcpy, findings_sync_memset, findings_pageable_async_memcpy, after
-- `nsys analyze` 2022.4) list. Installed by the loader after _shared.sql (it uses
-- filtered_memcpys/filtered_memsets, launched_by, mem_kind_name and pid_of).
--
-- Table macros (api_like: an ILIKE pattern on the issuing call's name, version suffix
-- included, e.g. 'cudaMemcpy%Async%'; the filter arguments as event_passes):
--   issued_memcpys(api_like, device, pid, stream, t0, t1, selection := NULL)
--   issued_memsets(api_like, device, pid, stream, t0, t1, selection := NULL)
--
-- Columns of both:
--   duration_ns  BIGINT   length of the operation on the GPU, ns
--   start_ns     BIGINT   its start, ns from session start
--   bytes_mb     DOUBLE   bytes copied or set / 10^6
--   pid          BIGINT   process id
--   device       BIGINT   CUDA device ordinal
--   context      BIGINT   CUDA context id
--   stream       BIGINT   CUDA stream id
--   api_name     VARCHAR  the API call that issued it
--   bytes        BIGINT   bytes copied or set (for the rules' own conditions)
-- issued_memcpys also:
--   src_kind, dst_kind  VARCHAR  source and destination memory kind (Pageable, Pinned, ...)
--   src_mem_kind, dst_mem_kind  BIGINT  the same as CUPTI memory kinds (0 = pageable)
--   copy_kind    BIGINT   CUPTI copyKind (1 = HtoD)
--   same_device  BOOLEAN  source and destination are one device (false when unknown)
-- issued_memsets also:
--   memory_kind  VARCHAR  memory kind set (Pageable, Pinned, Device, Managed, ...)
--   mem_kind     BIGINT   the same as a CUPTI memory kind (1 = pinned, 4 = managed)
CREATE OR REPLACE TEMP MACRO issued_memcpys(api_like, device, pid, stream, t0, t1, selection := NULL) AS TABLE
    SELECT
        m."end" - m.start AS duration_ns, m.start AS start_ns,
        mem_kind_name(m.srcKind) AS src_kind, mem_kind_name(m.dstKind) AS dst_kind,
        m.bytes / 1e6 AS bytes_mb, pid_of(m.globalPid) AS pid, m.deviceId AS device,
        m.contextId AS context, m.streamId AS stream, s.value AS api_name,
        m.bytes, m.srcKind AS src_mem_kind, m.dstKind AS dst_mem_kind, m.copyKind AS copy_kind,
        coalesce(m.srcDeviceId = m.dstDeviceId, false) AS same_device
    FROM filtered_memcpys(device, pid, stream, t0, t1, selection := selection) AS m
    JOIN runtime_calls AS r ON launched_by(m.globalPid, m.correlationId, r.globalTid, r.correlationId)
    JOIN strings AS s ON s.id = r.nameId
    WHERE s.value ILIKE api_like;
CREATE OR REPLACE TEMP MACRO issued_memsets(api_like, device, pid, stream, t0, t1, selection := NULL) AS TABLE
    SELECT
        m."end" - m.start AS duration_ns, m.start AS start_ns,
        mem_kind_name(m.memKind) AS memory_kind,
        m.bytes / 1e6 AS bytes_mb, pid_of(m.globalPid) AS pid, m.deviceId AS device,
        m.contextId AS context, m.streamId AS stream, s.value AS api_name,
        m.bytes, m.memKind AS mem_kind
    FROM filtered_memsets(device, pid, stream, t0, t1, selection := selection) AS m
    JOIN runtime_calls AS r ON launched_by(m.globalPid, m.correlationId, r.globalTid, r.correlationId)
    JOIN strings AS s ON s.id = r.nameId
    WHERE s.value ILIKE api_like;
