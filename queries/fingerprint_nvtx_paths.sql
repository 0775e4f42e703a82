-- fingerprint_nvtx_paths: for each CUDA API call that launched a kernel inside an NVTX range
-- on its thread, the id of its path in fp_path_lists (fingerprint_range_paths): on threads
-- whose ranges nest, the innermost range holding the call (nvtx_op_ranges, the sweep of
-- tracelens.nvtx); on the others, the call's own entry of fp_overlap_paths. Calls inside
-- no range are absent. No parameters.
--
-- Inputs: nvtx_op_ranges, and the temp tables fp_overlap_threads and fp_overlap_paths.
--
-- Columns:
--   pid             BIGINT  operating-system pid of the launching process
--   correlation_id  BIGINT  correlation id shared by the call and the kernels it launched
--   path_id         BIGINT  fp_path_lists.path_id
SELECT pid_of(globalPid) AS pid, correlationId AS correlation_id, any_value(range_id) AS path_id
FROM nvtx_op_ranges
WHERE kind = 'kernel' AND range_id IS NOT NULL
  AND global_tid NOT IN (SELECT global_tid FROM fp_overlap_threads)
GROUP BY 1, 2
UNION ALL
SELECT pid, correlation_id, path_id FROM fp_overlap_paths
