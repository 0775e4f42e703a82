-- _nvtx_overlap_holders: creates the temp table nvtx_overlap_holders: on the threads whose
-- NVTX ranges overlap (start/end ranges that cross), which ranges hold each CUDA API call
-- that launched GPU work, as nsys stats 2022.4 counts it (nvtx_gpu_proj_trace,
-- nvtx_kern_sum): every range on the call's thread that contains the whole call, whichever
-- other ranges also hold it. On other threads the ranges nest, and a range holds what its
-- descendants hold (nvtx_range_ops carried up the parent links, nvtx_paths.stack). Needs
-- nvtx_tree and nvtx_overlap_calls (registered by tracelens.nvtx_sweep: global_pid,
-- correlation_id, global_tid, start, "end", first_ns, last_ns of those calls). Such threads
-- are rare and hold few ranges; the join compares each of their calls with its thread's
-- ranges.
--
-- Columns of nvtx_overlap_holders:
--   global_pid      BIGINT  the call's process
--   correlation_id  BIGINT  its correlationId
--   range_id        BIGINT  a range holding it (nsys's RangeId)
--   first_ns        BIGINT  start of the call's first GPU operation, ns from session start
--   last_ns         BIGINT  end of its last one, ns
CREATE OR REPLACE TEMP TABLE nvtx_overlap_holders AS
SELECT c.global_pid, c.correlation_id, p.range_id::BIGINT AS range_id, c.first_ns, c.last_ns
FROM nvtx_overlap_calls AS c
JOIN nvtx_tree AS p
  ON p.global_tid = c.global_tid AND p.start <= c.start AND p."end" >= c."end"
