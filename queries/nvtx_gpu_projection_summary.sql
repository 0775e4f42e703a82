-- nvtx_gpu_projection_summary: GPU time per NVTX range group, the semantics of `nsys stats
-- --report nvtx_gpu_proj_sum` (nsys 2023+; grouped by range name and style there): each
-- range's projection (nvtx_projection: first to last GPU operation it launched) summed per
-- group. Ranges that launched no GPU work are not counted. Needs nvtx_projection and
-- nvtx_group (queries/_nvtx_ranges.sql).
-- Ordered by total projected time, largest first.
--
-- Parameters:
--   $group_by  VARCHAR  'name': the range's own name (nsys); 'path': its names from the top
--                       range down ('step / layer 3 / attn'), which keeps same-named ranges
--                       of different parents apart; 'torch': PyTorch labels without their
--                       per-call arguments ('aten::mm, seq = 12, op_id = 99, ...' ->
--                       'aten::mm'), so every call of an op is one row
--
-- Columns:
--   time_pct          DOUBLE   share of the summed projected time of all rows, %, 0.1
--   proj_total_ns     BIGINT   summed projected duration, ns (nested groups overlap)
--   range_total_ns    BIGINT   summed CPU duration of the same ranges, ns
--   instances         BIGINT   ranges
--   proj_avg_ns       DOUBLE   mean projected duration, ns, 0.1
--   proj_med_ns       DOUBLE   median projected duration, ns, 0.1
--   proj_min_ns       BIGINT   shortest projection, ns
--   proj_max_ns       BIGINT   longest projection, ns
--   proj_stddev_ns    DOUBLE   sample standard deviation (n - 1; 0 for one range), ns, 0.1
--   gpu_ops           BIGINT   GPU operations held, summed
--   avg_gpu_ops       DOUBLE   per range, 0.1
--   avg_level         DOUBLE   mean nesting level, 0.1
--   avg_children      DOUBLE   mean ranges directly inside that launched work, 0.1
--   style             VARCHAR  'PushPop' | 'StartEnd'
--   range             VARCHAR  the group: name, path or PyTorch op
WITH keyed AS (
    SELECT
        nvtx_group($group_by, name, path) AS range,
        style, proj_duration_ns, duration_ns, gpu_ops, level, children
    FROM nvtx_projection
),
per_group AS (
    SELECT
        range, style,
        duration_stats(proj_duration_ns) AS proj,
        sum(duration_ns) AS range_total_ns,
        sum(gpu_ops) AS gpu_ops,
        avg(gpu_ops) AS avg_gpu_ops,
        avg(level) AS avg_level,
        avg(children) AS avg_children
    FROM keyed
    GROUP BY range, style
),
shown AS (
    SELECT nsys_stats(proj) AS p, * EXCLUDE (proj) FROM per_group
)
-- nsys_stats's columns, the projection's named proj_*, with the CPU total among them
SELECT
    p.time_pct,
    p.total_ns AS proj_total_ns,
    range_total_ns::BIGINT AS range_total_ns,
    p.instances,
    p.avg_ns AS proj_avg_ns,
    p.med_ns AS proj_med_ns,
    p.min_ns AS proj_min_ns,
    p.max_ns AS proj_max_ns,
    p.stddev_ns AS proj_stddev_ns,
    gpu_ops::BIGINT AS gpu_ops,
    round(avg_gpu_ops, 1) AS avg_gpu_ops,
    round(avg_level, 1) AS avg_level,
    round(avg_children, 1) AS avg_children,
    style,
    range
FROM shown
ORDER BY proj_total_ns DESC, range, style
