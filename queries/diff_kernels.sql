-- diff_kernels: everything the diff reads about each kernel of one trace, from the GPU work
-- it has already read (work_in_order.sql's rows with $grid, registered as $work): census's columns
-- (kernel_summary's semantics, through the same duration_stats and nsys_stats macros), the
-- mean launch grid (to tell "each call does more work" from "each call runs another path"),
-- and the name id the launch sequences carry (their vocabulary). It reads no table of the
-- trace: on a million launches each scan of the kernel table costs about a census.
-- One row per name id of the requested kind, by total time, largest first, then by name.
-- Parameters:
--   $work       VARCHAR  name of the registered relation with work_in_order.sql's columns (kind,
--                        start_ns, end_ns, name_id, short_id, blocks; kind 0 are kernels),
--                        already filtered
--   $name_kind  VARCHAR  'demangled' | 'short'
-- Columns:
--   time_pct    DOUBLE   share of the kernel time of all rows, %, rounded to 0.1
--   total_ns    BIGINT   sum of durations, ns
--   instances   BIGINT   launches
--   avg_ns      DOUBLE   mean duration, ns, rounded to 0.1
--   med_ns      DOUBLE   median duration (mean of the middle two for an even count), ns, 0.1
--   min_ns      BIGINT   shortest launch, ns
--   max_ns      BIGINT   longest launch, ns
--   stddev_ns   DOUBLE   sample standard deviation (n - 1; 0 for one launch), ns, 0.1
--   name        VARCHAR  kernel name of the requested kind
--   name_id     BIGINT   its StringIds id (work_in_order's name_id, or short_id for 'short')
--   avg_blocks  DOUBLE   mean thread blocks per launch (gridX * gridY * gridZ)
WITH launches AS (
    SELECT
        end_ns - start_ns AS dur_ns,
        CASE $name_kind WHEN 'short' THEN short_id ELSE name_id END AS name_id,
        blocks
    FROM query_table($work)
    WHERE kind = 0
),
per_id AS (
    SELECT name_id, duration_stats(dur_ns) AS stats, avg(blocks) AS avg_blocks
    FROM launches
    GROUP BY name_id
)
SELECT
    unnest(nsys_stats(stats)),
    string_or_id(s.value, name_id) AS name,
    name_id::BIGINT AS name_id,
    avg_blocks
FROM per_id
LEFT JOIN strings AS s ON s.id = per_id.name_id
ORDER BY stats.total_ns DESC, name
