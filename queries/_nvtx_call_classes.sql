-- _nvtx_call_classes: the eventClass of every CUDA API call, in the order _nvtx_calls gives
-- the calls (both read runtime_calls whole, without a filter or an ORDER BY: DuckDB keeps
-- the scan's order). tracelens.nvtx_sweep reads it only when two calls share a (process,
-- correlationId), the runtime and the driver record of one call, to keep the runtime one.
--
-- Columns:
--   event_class  BIGINT  eventClass (the runtime record's sorts before the driver's)
SELECT eventClass AS event_class
FROM runtime_calls
