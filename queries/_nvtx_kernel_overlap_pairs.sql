-- _nvtx_kernel_overlap_pairs: the kernels launched on threads whose NVTX ranges overlap,
-- each with every range holding its launching call (nvtx_overlap_holders, nsys stats
-- 2022.4's rule there); one row per (kernel, holder), or one row with NULL holder for a
-- kernel in no range. Such threads are rare, so these rows are few. Needs nvtx_overlap_ops,
-- nvtx_overlap_holders and nvtx_range_groups (tracelens.nvtx_sweep registers the first).
--
-- Parameters:
--   $name_kind  VARCHAR  kernel name: 'demangled' | 'short'
--
-- Columns:
--   global_tid  BIGINT   the thread of the launching call
--   name_id     BIGINT   the kernel's name (StringIds)
--   dur_ns      BIGINT   its duration, ns
--   holder_id   BIGINT   a range holding the call (NULL: none)
--   gid         BIGINT   its group (nvtx_range_groups; NULL: none)
--   first       BOOLEAN  the kernel's first row in this group (it counts once there)
SELECT k.global_tid,
       CASE $name_kind WHEN 'short' THEN k.short_id ELSE k.name_id END AS name_id,
       k."end" - k.start AS dur_ns,
       o.range_id AS holder_id,
       g.gid,
       row_number() OVER (
           PARTITION BY k.globalPid, k.correlationId, k.start, k.device, g.gid
           ORDER BY o.range_id) = 1 AS first
FROM nvtx_overlap_ops AS k
LEFT JOIN nvtx_overlap_holders AS o
  ON o.global_pid = k.globalPid AND o.correlation_id = k.correlationId
LEFT JOIN nvtx_range_groups AS g ON g.range_id = o.range_id
WHERE k.kind = 'kernel'
