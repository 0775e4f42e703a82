-- fingerprint_overlap_threads: the threads whose NVTX ranges do not nest, where a call's
-- enclosing ranges are not the chain of its innermost range and its ancestors: a range
-- crosses another (nvtx_tree: a range open at another's start that does not contain it
-- makes level differ from depth). The fingerprint pairs those threads' calls with their
-- ranges directly (fingerprint_nvtx_overlaps); every other thread takes the sweep. A range
-- that ends on another thread holds no work in either (nsys projects only ranges that end
-- on their own thread; nvtx_tree leaves them out), so it does not send its thread here.
-- Needs nvtx_tree (tracelens.nvtx.build_attribution). No parameters.
--
-- Columns:
--   global_tid  BIGINT  the thread (globalTid)
SELECT DISTINCT global_tid FROM nvtx_tree WHERE level <> depth AND global_tid IS NOT NULL
ORDER BY global_tid
