-- report_lineup_activities: lineup_activities.sql (the input of `tracelens lineup`) of the
-- whole trace, without $by or a filter, its kernels taken from the GPU work the report has
-- already read once (tracelens.util.work_in_order's rows), so that the line-up reads no
-- kernel table again: on a 5M-kernel export that read costs about a census. Memcpys and
-- memsets are read from the trace, as lineup_activities reads them. Same rows, same order
-- as lineup_activities.sql with $by NULL and no filter.
--
-- Parameters:
--   $work       VARCHAR  name of the registered relation with work_in_order.sql's columns
--                        (kind, start_ns, end_ns, name_id, short_id; kind 0 are kernels)
--   $name_kind  VARCHAR  'demangled' | 'short': how `display` spells a kernel
--
-- Columns:
--   group_key  BIGINT   NULL (no $by)
--   kind       VARCHAR  'kernel', 'memcpy' or 'memset'
--   name       VARCHAR  demangled kernel name (what categories are decided on), or the
--                       memory operation label
--   display    VARCHAR  the kernel name as $name_kind spells it; the label for memory
--                       operations
--   calls      BIGINT   kernel launches, or memory operations
--   total_ns   BIGINT   sum of durations, ns
WITH per_kernel AS (
    SELECT name_id,
           CASE $name_kind WHEN 'short' THEN short_id ELSE name_id END AS display_id,
           count(*) AS calls,
           sum(end_ns - start_ns) AS total_ns
    FROM query_table($work)
    WHERE kind = 0
    GROUP BY ALL
),
memory_ops AS (
    SELECT
        'memcpy' AS kind,
        coalesce(k.label, '[CUDA memcpy kind ' || m.copyKind || ']') AS label,
        m."end" - m.start AS dur_ns
    FROM filtered_memcpys(NULL, NULL, NULL, NULL, NULL, selection := NULL) AS m
    LEFT JOIN memcpy_labels AS k ON k.copyKind = m.copyKind
    UNION ALL
    SELECT 'memset', '[CUDA memset]', "end" - start
    FROM filtered_memsets(NULL, NULL, NULL, NULL, NULL, selection := NULL)
),
activities AS (
    SELECT
        NULL::BIGINT AS group_key,
        'kernel' AS kind,
        coalesce(n.value, '<unknown string id ' || p.name_id || '>') AS name,
        coalesce(d.value, '<unknown string id ' || p.display_id || '>') AS display,
        p.calls,
        p.total_ns
    FROM per_kernel AS p
    LEFT JOIN strings AS n ON n.id = p.name_id
    LEFT JOIN strings AS d ON d.id = p.display_id
    UNION ALL
    SELECT NULL::BIGINT, kind, label, label, count(*), sum(dur_ns)
    FROM memory_ops
    GROUP BY kind, label
)
SELECT group_key, kind, name, display, calls, total_ns::BIGINT AS total_ns
FROM activities
ORDER BY group_key NULLS LAST, total_ns DESC, kind, name, display
