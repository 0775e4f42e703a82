-- nvtx_kernel_summary: kernels per NVTX range group, the semantics of `nsys stats --report
-- nvtx_kern_sum` (2022.4: nvtxkernsum): each kernel counts in every range that holds its
-- launching call (the innermost and all its ancestors; on a thread whose ranges overlap,
-- every range containing the call, nvtx_overlap_holders), grouped by range, kernel name
-- and the launching process and thread. Kernels launched outside every range form the rows
-- whose range is NULL, as in nsys. Needs nvtx_op_ranges, nvtx_tree, nvtx_paths,
-- nvtx_overlap_calls and nvtx_overlap_holders (tracelens.nvtx builds them).
-- Ordered by range, pid, tid, then total time, largest first.
--
-- No kernel is compared with a range: the sweep gave each kernel its innermost range, and
-- the ranges holding it are that range's ancestors, listed once per innermost range
-- (holders, from nvtx_tree's parent links), so each kernel meets its holders by one
-- equi-join on range_id. Where one kernel has two holders of one group (same-named nested
-- ranges), the holder chosen in `holders` (`first`) counts it in `kernels`; no DISTINCT over
-- (kernel, group) pairs (on 5M kernels that took 12-15 GB).
--
-- Parameters:
--   $group_by   VARCHAR  'name' | 'path' | 'torch' (see nvtx_gpu_projection_summary)
--   $name_kind  VARCHAR  kernel name: 'demangled' | 'short'
--
-- Columns:
--   range       VARCHAR  the range group (NULL: launched outside every range)
--   style       VARCHAR  'PushPop' | 'StartEnd'
--   pid, tid    BIGINT   process and thread that launched the kernels
--   ranges      BIGINT   range instances of the group holding these kernels
--   kernels     BIGINT   kernel instances (a kernel inside two same-named nested ranges
--                        counts once here, twice in the times, as in nsys)
--   total_ns    BIGINT   summed kernel duration, ns
--   avg_ns      DOUBLE   mean, ns, 0.1
--   med_ns      DOUBLE   median, ns, 0.1
--   min_ns      BIGINT   shortest, ns
--   max_ns      BIGINT   longest, ns
--   stddev_ns   DOUBLE   sample standard deviation (n - 1; 0 for one), ns, 0.1
--   name        VARCHAR  kernel name
WITH RECURSIVE
kernels_held AS (
    SELECT o.globalPid, o.correlationId, o.start, o.device, o."end" - o.start AS dur_ns,
           CASE $name_kind WHEN 'short' THEN o.short_id ELSE o.name_id END AS name_id,
           o.global_tid, o.range_id
    FROM nvtx_op_ranges AS o
    WHERE o.kind = 'kernel'
),
-- the threads whose ranges overlap (those of nvtx_overlap_calls): there a call's holders
-- are nvtx_overlap_holders, not the innermost range's ancestors
overlapping AS MATERIALIZED (
    SELECT DISTINCT global_tid FROM nvtx_overlap_calls
),
grouped AS MATERIALIZED (
    SELECT range_id, style,
           CASE $group_by
               WHEN 'path' THEN path
               WHEN 'torch' THEN torch_label(name)
               ELSE name
           END AS range
    FROM nvtx_paths
),
links AS MATERIALIZED (
    SELECT t.range_id, t.parent_id
    FROM nvtx_paths AS p
    JOIN nvtx_tree AS t ON t.range_id = p.range_id
),
innermost AS MATERIALIZED (
    SELECT DISTINCT range_id
    FROM kernels_held
    WHERE range_id IS NOT NULL AND global_tid NOT IN (SELECT global_tid FROM overlapping)
),
up AS (
    -- each innermost range, then its ancestors, one level per step
    SELECT range_id, range_id AS holder_id FROM innermost
    UNION ALL
    SELECT u.range_id, l.parent_id
    FROM up AS u
    JOIN links AS l ON l.range_id = u.holder_id
    WHERE l.parent_id IS NOT NULL
),
holders AS MATERIALIZED (
    SELECT u.range_id, u.holder_id, g.range, g.style,
           row_number() OVER (
               PARTITION BY u.range_id, g.range, g.style ORDER BY u.holder_id) = 1 AS first
    FROM up AS u
    LEFT JOIN grouped AS g ON g.range_id = u.holder_id
),
pairs AS (
    SELECT k.global_tid, k.name_id, k.dur_ns, h.holder_id, h.range, h.style,
           coalesce(h.first, true) AS first
    FROM kernels_held AS k
    LEFT JOIN holders AS h ON h.range_id = k.range_id
    WHERE k.global_tid IS NULL OR k.global_tid NOT IN (SELECT global_tid FROM overlapping)
    UNION ALL
    SELECT k.global_tid, k.name_id, k.dur_ns, o.range_id, g.range, g.style,
           row_number() OVER (
               PARTITION BY k.globalPid, k.correlationId, k.start, k.device, g.range, g.style
               ORDER BY o.range_id) = 1
    FROM kernels_held AS k
    LEFT JOIN nvtx_overlap_holders AS o
      ON o.global_pid = k.globalPid AND o.correlation_id = k.correlationId
    LEFT JOIN grouped AS g ON g.range_id = o.range_id
    WHERE k.global_tid IN (SELECT global_tid FROM overlapping)
),
per_group AS (
    SELECT
        range, style, global_tid, name_id,
        count(DISTINCT holder_id) AS ranges,
        count_if(first) AS kernels,
        sum(dur_ns)::BIGINT AS total_ns,
        round(avg(dur_ns), 1) AS avg_ns,
        round(median(dur_ns), 1) AS med_ns,
        min(dur_ns) AS min_ns,
        max(dur_ns) AS max_ns,
        round(coalesce(stddev_samp(dur_ns), 0), 1) AS stddev_ns
    FROM pairs
    GROUP BY range, style, global_tid, name_id
)
SELECT
    p.range, p.style, pid_of(p.global_tid) AS pid, tid_of(p.global_tid) AS tid,
    p.ranges, p.kernels, p.total_ns, p.avg_ns, p.med_ns, p.min_ns, p.max_ns, p.stddev_ns,
    coalesce(s.value, '<unknown string id ' || p.name_id || '>') AS name
FROM per_group AS p
LEFT JOIN strings AS s ON s.id = p.name_id
ORDER BY p.range NULLS LAST, pid, tid, p.total_ns DESC, name
