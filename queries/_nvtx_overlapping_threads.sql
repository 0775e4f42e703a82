-- _nvtx_overlapping_threads: the threads whose NVTX ranges do not all nest (start/end ranges
-- that overlap: nvtx_tree's level differs from the depth of the open ranges somewhere).
-- There the sweep's marks say only which range opened last, so a CUDA API call they put in
-- no range may still lie in one (tracelens.nvtx_sweep refits those calls).
--
-- Columns:
--   global_tid  BIGINT  thread
SELECT DISTINCT global_tid FROM nvtx_tree WHERE level <> depth AND global_tid IS NOT NULL
ORDER BY global_tid
