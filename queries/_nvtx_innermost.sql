-- _nvtx_innermost: for each probe (a time span on a thread, e.g. a CUDA API call), the name
-- of the innermost NVTX range on that thread that encloses it: the latest-starting such
-- range, the shortest on ties (then the smallest name). Probes with no enclosing range
-- are absent.
--
-- The ranges are those of nvtx_ranges() that nsys projects onto the GPU, as the nvtx
-- command and --nvtx count them: named as nsys names them ('domain:label' in a named
-- domain), one left open at the end of the capture lasting until the latest NVTX
-- timestamp, and none that ended on another thread than the one that opened it.
--
-- Inputs: the nvtx_text table and the nvtx_ranges() macro (Trace.load_nvtx_text) and a
-- relation `nvtx_probes` the caller registers: probe BIGINT (any key), global_tid BIGINT,
-- start BIGINT, "end" BIGINT (ns from session start).
--
-- Run it with merge_join_threshold = 0 and keep it free of CTEs: DuckDB 1.5 plans the two
-- time inequalities as an IEJoin (n log n) only then; otherwise it picks a piecewise merge
-- join that compares every probe with every range (minutes on 100k x 100k). The thread
-- test is a difference for the same reason: as an equality it becomes a hash join on the
-- thread, with the time tests checked on every pair of the thread's probes and ranges.
--
-- Columns:
--   probe  BIGINT   the probe's key
--   nvtx   VARCHAR  the range's name (nvtx_ranges().name)
-- Rows by probe.
SELECT p.probe, n.name AS nvtx
FROM nvtx_probes AS p
JOIN nvtx_ranges() AS n ON n.start <= p.start AND n."end" >= p."end"
WHERE n.global_tid - p.global_tid = 0
  AND n.same_thread
QUALIFY row_number() OVER (PARTITION BY p.probe ORDER BY n.start DESC, n."end", n.range_id DESC) = 1
ORDER BY p.probe
