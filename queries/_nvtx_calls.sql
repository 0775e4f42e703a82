-- _nvtx_calls: every CUDA API call, the calls the NVTX sweep (tracelens.nvtx_sweep)
-- attributes to ranges. Two rows may share a (process, correlationId): the runtime and the
-- driver record of one call; the sweep keeps the first, runtime before driver (eventClass),
-- then the earlier. No join with the GPU work first: the sweep is cheaper than a 5M x 5M
-- semi join that only drops calls.
--
-- Columns (tracelens.nvtx_sweep adds global_pid, the calling process: globalTid with the
-- thread bits cleared; made there, a sixth column of 5M rows read from DuckDB cost 0.16
-- CPU s; and reads eventClass, which orders the two records of one call, only when two rows
-- share a (process, correlationId): in no shared trace, and 0.25 CPU s on 5M calls):
--   correlation_id  BIGINT  correlationId (one call per process, or its two records)
--   global_tid      BIGINT  the calling thread
--   start, "end"    BIGINT  the call, ns from session start
SELECT correlationId AS correlation_id, globalTid AS global_tid, start, "end"
FROM runtime_calls
