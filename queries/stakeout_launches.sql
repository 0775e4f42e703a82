-- stakeout_launches: every launch of the kernels whose demangled or short name matches a
-- pattern, with its launch configuration and the CUDA API call that launched it. One row
-- per launch, ordered by start.
--
-- Parameters (filters: NULL means "no filter"):
--   $pattern           VARCHAR  the name, or part of it, to look for ('exact', 'contains')
--   $regex             VARCHAR  RE2 regular expression (regexp_matches), or NULL
--   $match             VARCHAR  'exact' | 'contains' | 'regex'
--   $name_kind         VARCHAR  name shown: 'demangled' | 'short' | 'mangled' (mangled
--                               falls back to demangled where the export has none)
--   $origin_ns         BIGINT   what start_ns counts from (the trace's first event), ns
--                               from session start
--   $device            BIGINT   CUDA device ordinal (kernels.deviceId)
--   $pid               BIGINT   operating-system process id
--   $stream            BIGINT   CUDA stream id
--   $start_ns, $end_ns BIGINT   time window, ns from session start: as nsys, keep a launch
--                               that starts in, ends in, or spans the window
--   $selection         BIGINT   a work_selection id (--nvtx, --step): only the GPU work in it
--
-- Columns:
--   start_ns            BIGINT   kernel start, ns after $origin_ns
--   duration_ns         BIGINT   kernel duration, ns
--   queue_ns            BIGINT   kernel start - end of the API call that launched it, ns
--                               (negative: the kernel started before the call returned)
--   name                VARCHAR  kernel name of kind $name_kind
--   grid_x, grid_y, grid_z     BIGINT  grid dimensions (thread blocks)
--   block_x, block_y, block_z  BIGINT  block dimensions (threads)
--   registers           BIGINT   registers per thread
--   static_smem_bytes   BIGINT   static shared memory per block, bytes
--   dynamic_smem_bytes  BIGINT   dynamic shared memory per block, bytes
--   device              BIGINT   CUDA device ordinal
--   stream              BIGINT   CUDA stream id
--   pid                 BIGINT   process id
--   tid                 BIGINT   thread id of the API call
--   correlation_id      BIGINT   CUPTI correlation id (unique per process, not per trace)
--   api                 VARCHAR  the CUDA API call that launched it (same pid and
--                               correlation id; a runtime call preferred to a driver
--                               one), with a 4-character version suffix removed as nsys
--                               does (cudaLaunchKernel_v7000 -> cudaLaunchKernel); NULL
--                               (and tid, queue_ns NULL) when the API was not traced
--   api_global_tid      BIGINT   globalTid of that call  } for _nvtx_innermost.sql, which
--   api_start           BIGINT   its start, ns           } labels the call with its NVTX
--   api_end             BIGINT   its end, ns             } range (tracelens.stakeout)
WITH matched_ids AS (
    SELECT id
    FROM strings
    WHERE name_matches(value, $match, $pattern, $regex)
),
launches AS (
    -- only the columns shown: the kernel scan's cost grows with the columns it reads
    SELECT
        start, "end", deviceId, streamId, correlationId, registersPerThread,
        gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory,
        pid_of(globalPid) AS pid,
        CASE $name_kind
            WHEN 'short' THEN shortName
            WHEN 'mangled' THEN coalesce(mangledName, demangledName)
            ELSE demangledName
        END AS name_id
    FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
    WHERE (demangledName IN (SELECT id FROM matched_ids) OR shortName IN (SELECT id FROM matched_ids))
),
calls AS (
    -- the launching calls: same process and correlation id (a semi join reads the runtime
    -- table once, keeping only those calls)
    SELECT pid_of(r.globalTid) AS pid, r.correlationId, r.start, r."end", r.globalTid, r.nameId
    FROM runtime_calls AS r
    SEMI JOIN launches AS l ON l.correlationId = r.correlationId AND l.pid = pid_of(r.globalTid)
    QUALIFY row_number() OVER (
        PARTITION BY pid_of(r.globalTid), r.correlationId ORDER BY r.eventClass, r.start
    ) = 1
)
SELECT
    l.start - $origin_ns AS start_ns,
    l."end" - l.start AS duration_ns,
    l.start - c."end" AS queue_ns,
    coalesce(sn.value, '<unknown string id ' || l.name_id || '>') AS name,
    l.gridX AS grid_x, l.gridY AS grid_y, l.gridZ AS grid_z,
    l.blockX AS block_x, l.blockY AS block_y, l.blockZ AS block_z,
    l.registersPerThread AS registers,
    l.staticSharedMemory AS static_smem_bytes,
    l.dynamicSharedMemory AS dynamic_smem_bytes,
    l.deviceId AS device,
    l.streamId AS stream,
    l.pid,
    tid_of(c.globalTid) AS tid,
    l.correlationId AS correlation_id,
    regexp_replace(sa.value, '_v.{4}$', '') AS api,
    c.globalTid AS api_global_tid,
    c.start AS api_start,
    c."end" AS api_end
FROM launches AS l
LEFT JOIN calls AS c ON c.pid = l.pid AND c.correlationId = l.correlationId
LEFT JOIN strings AS sn ON sn.id = l.name_id
LEFT JOIN strings AS sa ON sa.id = c.nameId
ORDER BY l.start, l.deviceId, l.streamId, l.pid, l.correlationId
