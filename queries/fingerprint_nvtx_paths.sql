-- fingerprint_nvtx_paths: for each CUDA API call inside an NVTX range on its thread, the id
-- of its path in fp_path_lists (fingerprint_range_paths): on threads whose ranges nest, the
-- innermost range holding the call (nvtx_call_ranges, the sweep of tracelens.nvtx: one row
-- per call already, so no group-by over the calls; a call that launched no kernel matches
-- no launch in fingerprint_launches); on the others, the call's own entry of
-- fp_overlap_paths; and a call made after the last NVTX event inside ranges left open at
-- the end of the capture, on any thread, its entry of fp_open_paths (the open ranges
-- holding it: fingerprint_open_range_paths; the sweep, as nsys, ends such a range at the
-- last NVTX event). Calls inside no range are absent. No parameters.
--
-- Inputs: nvtx_call_ranges, and the temp tables fp_overlap_threads, fp_overlap_paths and
-- fp_open_paths.
--
-- Columns:
--   global_pid      BIGINT  the calling process (globalTid with the thread bits cleared: a
--                           kernel's globalPid)
--   correlation_id  BIGINT  correlation id shared by the call and the kernels it launched
--   path_id         BIGINT  fp_path_lists.path_id
SELECT global_pid, correlation_id, range_id AS path_id
FROM nvtx_call_ranges
WHERE range_id IS NOT NULL
  AND global_tid NOT IN (SELECT global_tid FROM fp_overlap_threads)
UNION ALL
SELECT global_pid, correlation_id, path_id FROM fp_overlap_paths
UNION ALL
SELECT global_pid, correlation_id, path_id FROM fp_open_paths
