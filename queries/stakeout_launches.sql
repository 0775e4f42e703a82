-- stakeout_launches: every launch of the kernels whose demangled or short name matches a
-- pattern, with its launch configuration. One row per launch, ordered by start. The CUDA API
-- call that launched it is read afterwards for the launches listed (after --limit) only
-- (queries/stakeout_calls.sql): on a 5M-call export its scan cost as much as this query.
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
--                               that ends at or after $start_ns and starts before $end_ns
--                               (in_window in _shared.sql)
--   $selection         BIGINT   a work_selection id (--nvtx, --step): only the GPU work in it
--
-- Columns:
--   start_ns            BIGINT   kernel start, ns after $origin_ns
--   duration_ns         BIGINT   kernel duration, ns
--   name                VARCHAR  kernel name of kind $name_kind
--   kernel_id           BIGINT   StringIds id of the demangled name: the kernel's identity
--                                (kernels that share a short name are told apart by it)
--   grid_x, grid_y, grid_z     BIGINT  grid dimensions (thread blocks)
--   block_x, block_y, block_z  BIGINT  block dimensions (threads)
--   registers           BIGINT   registers per thread
--   static_smem_bytes   BIGINT   static shared memory per block, bytes
--   dynamic_smem_bytes  BIGINT   dynamic shared memory per block, bytes
--   device              BIGINT   CUDA device ordinal
--   stream              BIGINT   CUDA stream id
--   pid                 BIGINT   process id
--   correlation_id      BIGINT   CUPTI correlation id (unique per process, not per trace)
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
        END AS name_id,
        demangledName AS kernel_id
    FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
    WHERE (demangledName IN (SELECT id FROM matched_ids) OR shortName IN (SELECT id FROM matched_ids))
)
SELECT
    l.start - $origin_ns AS start_ns,
    l."end" - l.start AS duration_ns,
    string_or_id(sn.value, l.name_id) AS name,
    l.kernel_id,
    l.gridX AS grid_x, l.gridY AS grid_y, l.gridZ AS grid_z,
    l.blockX AS block_x, l.blockY AS block_y, l.blockZ AS block_z,
    l.registersPerThread AS registers,
    l.staticSharedMemory AS static_smem_bytes,
    l.dynamicSharedMemory AS dynamic_smem_bytes,
    l.deviceId AS device,
    l.streamId AS stream,
    l.pid,
    l.correlationId AS correlation_id
FROM launches AS l
LEFT JOIN strings AS sn ON sn.id = l.name_id
ORDER BY l.start, l.deviceId, l.streamId, l.pid, l.correlationId
