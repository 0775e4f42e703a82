-- kernel_summary: GPU time per kernel, the semantics of `nsys stats --report
-- cuda_gpu_kern_sum` (and, with $by_launch_config, `cuda_gpu_kern_gb_sum` / 2022.4's
-- `gpukernsum`). One row per kernel name (per name + grid + block with $by_launch_config),
-- ordered by total time, largest first.
--
-- Parameters (NULL means "no filter"):
--   $name_kind         VARCHAR  'demangled' | 'short' | 'mangled' (mangled falls back to
--                               demangled where the export has no mangled name)
--   $by_launch_config  BOOLEAN  also group by grid and block dimensions
--   $device            BIGINT   CUDA device ordinal (kernels.deviceId)
--   $pid               BIGINT   operating-system process id
--   $stream            BIGINT   CUDA stream id
--   $start_ns, $end_ns BIGINT   time window, ns from session start: as nsys, keep a kernel
--                               that ends at or after $start_ns and starts before $end_ns
--                               (in_window in _shared.sql)
--   $selection         BIGINT   a work_selection id (--nvtx, --step): only the GPU work in it
--
-- Columns:
--   time_pct   DOUBLE   share of the GPU time of all rows, %, rounded to 0.1
--   total_ns   BIGINT   sum of durations, ns
--   instances  BIGINT   launches
--   avg_ns     DOUBLE   mean duration, ns, rounded to 0.1
--   med_ns     DOUBLE   median duration (mean of the middle two for an even count), ns, 0.1
--   min_ns     BIGINT   shortest launch, ns
--   max_ns     BIGINT   longest launch, ns
--   stddev_ns  DOUBLE   sample standard deviation (n - 1; 0 for one launch), ns, 0.1
--   grid_x, grid_y, grid_z     BIGINT  grid dimensions (thread blocks); NULL unless
--                                      $by_launch_config (tables print them as nsys's
--                                      GridXYZ, '%4d %4d %4d': tracelens.render)
--   block_x, block_y, block_z  BIGINT  block dimensions (threads), likewise
--   name       VARCHAR  kernel name of the requested kind
WITH launches AS (
    SELECT
        "end" - start AS dur_ns,
        CASE $name_kind
            WHEN 'short' THEN shortName
            WHEN 'mangled' THEN coalesce(mangledName, demangledName)
            ELSE demangledName
        END AS name_id,
        -- Group by the six integers and print them once per group, not once per launch;
        -- NULL unless asked, so the default reads only start, end and the name.
        CASE WHEN $by_launch_config THEN gridX END AS grid_x,
        CASE WHEN $by_launch_config THEN gridY END AS grid_y,
        CASE WHEN $by_launch_config THEN gridZ END AS grid_z,
        CASE WHEN $by_launch_config THEN blockX END AS block_x,
        CASE WHEN $by_launch_config THEN blockY END AS block_y,
        CASE WHEN $by_launch_config THEN blockZ END AS block_z
    FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
),
per_id AS (
    SELECT name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z,
           duration_stats(dur_ns) AS stats
    FROM launches
    GROUP BY name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z
)
SELECT
    unnest(nsys_stats(stats)),
    grid_x, grid_y, grid_z,
    block_x, block_y, block_z,
    string_or_id(s.value, name_id) AS name
FROM per_id
LEFT JOIN strings AS s ON s.id = per_id.name_id
ORDER BY stats.total_ns DESC, name, grid_x, grid_y, grid_z, block_x, block_y, block_z
