-- _nvtx_calls: every CUDA API call, the calls the NVTX sweep (tracelens.nvtx_sweep)
-- attributes to ranges. Two rows may share a (process, correlationId): the runtime and the
-- driver record of one call; the sweep keeps the first, runtime before driver (eventClass),
-- then the earlier. No join with the GPU work first: the sweep is cheaper than a 5M x 5M
-- semi join that only drops calls.
--
-- Columns:
--   global_pid      BIGINT  the calling process (globalTid with the thread bits cleared)
--   correlation_id  BIGINT  correlationId (one call per process, or its two records)
--   global_tid      BIGINT  the calling thread
--   start, "end"    BIGINT  the call, ns from session start
--   event_class     BIGINT  eventClass (the runtime record's sorts before the driver's)
SELECT globalTid - tid_of(globalTid) AS global_pid, correlationId AS correlation_id,
       globalTid AS global_tid, start, "end", eventClass AS event_class
FROM runtime_calls
