-- report_lineup_kernels: report_lineup_activities.sql of a page by demangled name, its
-- kernels' launches and summed time taken from the census the page computed of the GPU
-- work it read (report_kernel_summary.sql's name_id, launches and summed_ns, one row per
-- demangled name id: the groups report_lineup_activities.sql makes), so that the line-up
-- scans none of the millions of operations again. Memcpys and memsets are read from the
-- trace, as lineup_activities reads them. Same rows, same order as
-- report_lineup_activities.sql with $name_kind 'demangled'.
--
-- Parameters:
--   $kernels  VARCHAR  name of the registered relation with report_kernel_summary.sql's
--                      name_id, launches and summed_ns (by demangled name)
--
-- Columns:
--   group_key  BIGINT   NULL (no $by)
--   stream_device, stream_pid  BIGINT  NULL (no $by 'stream')
--   kind       VARCHAR  'kernel', 'memcpy' or 'memset'
--   name       VARCHAR  demangled kernel name, or the memory operation label
--   display    VARCHAR  the demangled kernel name; the label for memory operations
--   calls      BIGINT   kernel launches, or memory operations
--   total_ns   BIGINT   sum of durations, ns
WITH per_kernel AS (
    SELECT NULL::BIGINT AS group_key,
           NULL::BIGINT AS stream_device,
           NULL::BIGINT AS stream_pid,
           name_id,
           name_id AS display_id,
           launches AS calls,
           summed_ns AS total_ns
    FROM query_table($kernels)
)
SELECT group_key, stream_device, stream_pid, kind, name, display, calls,
       total_ns::BIGINT AS total_ns
FROM lineup_activity_rows('per_kernel', NULL, NULL, NULL, NULL, NULL, NULL, selection := NULL)
ORDER BY group_key NULLS LAST, total_ns DESC, kind, name, display
