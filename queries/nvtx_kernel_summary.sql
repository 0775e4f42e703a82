-- nvtx_kernel_summary: kernels per NVTX range group, the semantics of `nsys stats --report
-- nvtx_kern_sum` (2022.4: nvtxkernsum), as numbers: each kernel counts in every range that
-- holds its launching call (the innermost and all its ancestors; on a thread whose ranges
-- overlap, every range containing the call, nvtx_overlap_holders), grouped by range,
-- kernel name and the launching process and thread. Kernels launched outside every range
-- form the rows whose group is NULL, as in nsys. Ordered by range, pid, tid, then total
-- time, largest first, then kernel name.
--
-- The statistics per (group, thread, kernel name) come from nvtx_kernel_stats, which
-- tracelens.nvtx_kernels registers (gid, global_tid, name_id, ranges, kernels, pairs,
-- total_ns, med_ns, min_ns, max_ns, stddev_ns: over the (kernel, holding range) pairs of
-- the group); here they are rounded and sorted by the ranks of the groups' and kernels'
-- names (nvtx_range_groups, strings), not by the strings row by row. The strings are not
-- in the rows (4M rows on the 5M-kernel benchmark, whose PyTorch labels are unique per op:
-- sorting and handing over their text took 3.6 GB); tracelens.nvtx_kernels gives each row
-- its range, style and name from gid and name_id.
--
-- Columns:
--   gid         BIGINT   the range group (nvtx_range_groups; NULL: outside every range)
--   name_id     BIGINT   kernel name (StringIds)
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
WITH groups AS (
    SELECT DISTINCT gid, range_rank FROM nvtx_range_groups
),
names AS (
    SELECT name_id, dense_rank() OVER (ORDER BY name) AS name_rank
    FROM (
        SELECT DISTINCT k.name_id,
               coalesce(s.value, '<unknown string id ' || k.name_id || '>') AS name
        FROM nvtx_kernel_stats AS k
        LEFT JOIN strings AS s ON s.id = k.name_id
    )
)
SELECT
    k.gid, k.name_id, pid_of(k.global_tid) AS pid, tid_of(k.global_tid) AS tid,
    k.ranges::BIGINT AS ranges,
    k.kernels::BIGINT AS kernels,
    k.total_ns::BIGINT AS total_ns,
    round(k.total_ns / k.pairs, 1) AS avg_ns,
    round(k.med_ns, 1) AS med_ns,
    k.min_ns::BIGINT AS min_ns,
    k.max_ns::BIGINT AS max_ns,
    round(coalesce(k.stddev_ns, 0), 1) AS stddev_ns
FROM nvtx_kernel_stats AS k
LEFT JOIN groups AS g ON g.gid = k.gid
LEFT JOIN names AS n ON n.name_id IS NOT DISTINCT FROM k.name_id
ORDER BY g.range_rank NULLS LAST, pid, tid, k.total_ns DESC, n.name_rank
