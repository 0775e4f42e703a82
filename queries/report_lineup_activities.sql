-- report_lineup_activities: lineup_activities.sql (the input of `tracelens lineup`) of the
-- whole trace, without $by or a filter, its kernels taken from the GPU work the report has
-- already read once (tracelens.util.work_in_order's rows), so that the line-up reads no
-- kernel table again: on a 5M-kernel export that read costs about a census. Memcpys and
-- memsets are read from the trace, as lineup_activities reads them. Same rows, same order
-- as lineup_activities.sql with $by NULL and no filter: both are queries/_lineup.sql's
-- lineup_activity_rows of their kernels.
--
-- Parameters:
--   $work       VARCHAR  name of the registered relation with work_in_order.sql's columns
--                        (kind, start_ns, end_ns, name_id, short_id; kind 0 are kernels)
--   $name_kind  VARCHAR  'demangled' | 'short': how `display` spells a kernel
--
-- Columns:
--   group_key  BIGINT   NULL (no $by)
--   stream_device, stream_pid  BIGINT  NULL (no $by 'stream')
--   kind       VARCHAR  'kernel', 'memcpy' or 'memset'
--   name       VARCHAR  demangled kernel name (what categories are decided on), or the
--                       memory operation label
--   display    VARCHAR  the kernel name as $name_kind spells it; the label for memory
--                       operations
--   calls      BIGINT   kernel launches, or memory operations
--   total_ns   BIGINT   sum of durations, ns
WITH per_kernel AS (
    SELECT NULL::BIGINT AS group_key,
           NULL::BIGINT AS stream_device,
           NULL::BIGINT AS stream_pid,
           name_id,
           CASE $name_kind WHEN 'short' THEN short_id ELSE name_id END AS display_id,
           count(*) AS calls,
           sum(end_ns - start_ns) AS total_ns
    FROM query_table($work)
    WHERE kind = 0
    GROUP BY ALL
)
SELECT group_key, stream_device, stream_pid, kind, name, display, calls,
       total_ns::BIGINT AS total_ns
FROM lineup_activity_rows('per_kernel', NULL, NULL, NULL, NULL, NULL, NULL, selection := NULL)
ORDER BY group_key NULLS LAST, total_ns DESC, kind, name, display
