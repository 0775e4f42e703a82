-- Probe of queries/_nvtx_spans.sql: the nvtx_spans table Trace.load_nvtx_spans creates.
SELECT range_id, tid_of(global_tid) AS tid, start, "end"
FROM nvtx_spans
ORDER BY range_id
