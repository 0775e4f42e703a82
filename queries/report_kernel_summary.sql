-- report_kernel_summary: kernel_summary.sql (census: `nsys stats` cuda_gpu_kern_sum) of
-- every kernel, from the GPU work the report has already read once (its timekeeping:
-- tracelens.util.work_in_order's rows), so that census reads no table of the trace again:
-- on a 5M-kernel export each read of the kernel table costs about a census. Same rows,
-- same order, from the same macros (duration_stats, nsys_stats) as kernel_summary.sql
-- without a filter or launch configurations.
--
-- Parameters:
--   $work       VARCHAR  name of the registered relation with work_in_order.sql's columns
--                        (kind, start_ns, end_ns, name_id, short_id; kind 0 are kernels)
--   $name_kind  VARCHAR  'demangled' | 'short'
--
-- Columns: as kernel_summary.sql without the launch configuration (time_pct DOUBLE %,
-- total_ns BIGINT, instances BIGINT, avg_ns, med_ns DOUBLE ns 0.1, min_ns, max_ns BIGINT
-- ns, stddev_ns DOUBLE ns 0.1, name VARCHAR), then what the line-up of a page by
-- demangled name takes from them (report_lineup_kernels.sql: its kernels, not a second
-- scan of the work) and the census leaves out (tracelens.report.sharedread):
--   name_id    BIGINT  StringIds id the row groups by ($name_kind's)
--   launches   BIGINT  launches (count(*), as report_lineup_activities.sql counts them)
--   summed_ns  BIGINT  summed duration, ns (as report_lineup_activities.sql sums it)
WITH per_id AS (
    SELECT CASE $name_kind WHEN 'short' THEN short_id ELSE name_id END AS name_id,
           duration_stats(end_ns - start_ns) AS stats,
           count(*) AS launches,
           sum(end_ns - start_ns) AS summed_ns
    FROM query_table($work)
    WHERE kind = 0
    GROUP BY ALL
)
SELECT
    unnest(nsys_stats(stats)),
    string_or_id(s.value, name_id) AS name,
    name_id::BIGINT AS name_id,
    launches::BIGINT AS launches,
    summed_ns::BIGINT AS summed_ns
FROM per_id
LEFT JOIN strings AS s ON s.id = per_id.name_id
ORDER BY stats.total_ns DESC, name
