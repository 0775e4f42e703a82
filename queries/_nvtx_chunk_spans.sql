-- _nvtx_chunk_spans: the NVTX ranges of one chunk of threads (nvtx_spans, those
-- in_thread_chunk($from_tid, $to_tid, $null_tid)), which tracelens.nvtx_sweep.depths reads
-- to count, per thread, the ranges open when each one starts (the depth _nvtx_tree nests
-- them by).
--
-- Columns:
--   range_id    BIGINT  nsys's RangeId
--   global_tid  BIGINT  thread
--   start, "end" BIGINT range start and end, ns from session start
SELECT range_id, global_tid, start, "end"
FROM nvtx_spans
WHERE in_thread_chunk(global_tid, $from_tid, $to_tid, $null_tid)
