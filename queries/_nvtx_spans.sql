-- _nvtx_spans: the body of the temp table nvtx_spans (Trace.load_nvtx_spans runs it): the
-- NVTX ranges nsys projects onto the GPU, as nvtx_ranges() has them (push/pop and start/end
-- ranges, eventType 59, 60, 70, 71, that end on the thread that opened them; one left open
-- at the end of the capture lasts until $last_ts, the latest NVTX timestamp), with only what
-- the sweep of _nvtx_tree needs: no labels, so 10M ranges cost four numbers each.
--
-- Inputs: the relation nvtx_span_source (the caller's WITH: row_id, start, "end",
-- eventType, globalTid, endGlobalTid of NVTX_EVENTS, from the export, the cache entry or
-- nvtx_text) and $last_ts (BIGINT, ns).
--
-- Columns:
--   range_id    BIGINT   the NVTX_EVENTS rowid (nsys's RangeId)
--   global_tid  BIGINT   the thread that opened it (globalTid)
--   start       BIGINT   range start, ns from session start
--   "end"       BIGINT   range end, ns (open ranges: $last_ts)
SELECT row_id AS range_id, globalTid AS global_tid, start, coalesce("end", $last_ts) AS "end"
FROM nvtx_span_source
WHERE is_nvtx_range_type(eventType) AND ends_on_own_thread(globalTid, endGlobalTid)
