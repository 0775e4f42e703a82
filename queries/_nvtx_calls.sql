-- _nvtx_calls: creates the temp table nvtx_calls: every CUDA API call, one per (process,
-- correlationId), the calls the NVTX sweep attributes to ranges (_nvtx_call_ranges). An
-- operation launched by two API rows (runtime and driver record of one correlationId) takes
-- the first: runtime before driver (eventClass), then the earlier. No join with the GPU work
-- first: the sweep is cheaper than a 5M x 5M semi join that only drops calls.
--
-- Columns of nvtx_calls:
--   global_pid      BIGINT  the calling process (globalTid with the thread bits cleared)
--   correlation_id  BIGINT  correlationId (unique per process)
--   global_tid      BIGINT  the calling thread
--   start, "end"    BIGINT  the call, ns from session start
CREATE OR REPLACE TEMP TABLE nvtx_calls AS
SELECT global_pid, correlation_id, c.global_tid, c.start, c."end"
FROM (
    SELECT globalTid - tid_of(globalTid) AS global_pid, correlationId AS correlation_id,
           arg_min({'global_tid': globalTid, 'start': start, 'end': "end"},
                   (eventClass, start)) AS c
    FROM runtime_calls
    GROUP BY 1, 2
)
