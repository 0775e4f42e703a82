-- _nvtx_innermost: for each probe (a time span on a thread, e.g. a CUDA API call), the label
-- of the innermost NVTX range on that thread that encloses it: the latest-starting such
-- range, the shortest on ties (then the smallest label). Probes with no enclosing range
-- are absent.
--
-- Inputs: the nvtx_text table (Trace.load_nvtx_text) and a relation `nvtx_probes` the
-- caller registers: probe BIGINT (any key), global_tid BIGINT, start BIGINT, "end" BIGINT
-- (ns from session start).
--
-- Run it with merge_join_threshold = 0 and keep it free of CTEs: DuckDB 1.5 plans the two
-- time inequalities as an IEJoin (n log n) only then; otherwise it picks a piecewise merge
-- join that compares every probe with every range (minutes on 100k x 100k). The thread
-- test is a difference for the same reason: as an equality it becomes a hash join on the
-- thread, with the time tests checked on every pair of the thread's probes and ranges.
--
-- Ranges are NVTX push/pop and start/end ranges (eventType 59, 60, and nsys's own 70, 71).
--
-- Columns:
--   probe  BIGINT   the probe's key
--   nvtx   VARCHAR  range label: its text, or its registered string (StringIds[textId])
-- Rows by probe.
SELECT p.probe, coalesce(n.text, s.value) AS nvtx
FROM nvtx_probes AS p
JOIN nvtx_text AS n ON n.start <= p.start AND n."end" >= p."end"
LEFT JOIN strings AS s ON s.id = n.textId
WHERE n.globalTid - p.global_tid = 0
  AND is_nvtx_range(n.eventType, n."end")
QUALIFY row_number() OVER (
    PARTITION BY p.probe ORDER BY n.start DESC, n."end", coalesce(n.text, s.value)
) = 1
ORDER BY p.probe
