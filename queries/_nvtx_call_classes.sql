-- _nvtx_call_classes: the eventClass of every CUDA API call, keyed by what _nvtx_calls
-- reads of it (both read in any order: tracelens.nvtx_sweep looks each call's class up by
-- these columns, never by position). tracelens.nvtx_sweep reads it only when two calls share
-- a (process, correlationId), the runtime and the driver record of one call, to keep the
-- runtime one (or when the correlation ids are too sparse for a table of slots).
--
-- Columns:
--   correlation_id  BIGINT  correlationId
--   global_tid      BIGINT  the calling thread
--   start, "end"    BIGINT  the call, ns from session start
--   event_class     BIGINT  eventClass (the runtime record's sorts before the driver's)
SELECT correlationId AS correlation_id, globalTid AS global_tid, start, "end",
    eventClass AS event_class
FROM runtime_calls
ORDER BY correlation_id, global_tid, start, "end", event_class
