-- _nvtx_kernel_launches: the kernels tracelens.nvtx_kernels attributes to the ranges of
-- nvtx_kernel_holders: every kernel (nvtx_op_ranges) except those launched on a thread
-- whose ranges overlap (_nvtx_kernel_overlap_pairs has those), with what the per-group
-- statistics need and nothing else (5M kernels, four numbers each).
--
-- Parameters:
--   $name_kind  VARCHAR  kernel name: 'demangled' | 'short'
--
-- Columns:
--   global_tid  BIGINT  the thread of the launching call (NULL: no call recorded)
--   name_id     BIGINT  the kernel's name (StringIds)
--   dur_ns      BIGINT  its duration, ns
--   range_id    BIGINT  innermost range holding the launching call (NULL: none)
SELECT global_tid,
       CASE $name_kind WHEN 'short' THEN short_id ELSE name_id END AS name_id,
       "end" - start AS dur_ns,
       range_id
FROM nvtx_op_ranges
WHERE kind = 'kernel'
  AND (global_tid IS NULL OR global_tid NOT IN (SELECT global_tid FROM nvtx_overlap_calls))
