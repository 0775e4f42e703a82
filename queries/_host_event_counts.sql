-- _host_event_counts: _event_counts's rows of the kinds that are not GPU work (runtime, nvtx,
-- graph), for a caller that holds the GPU work's figures already (the report: its sorted
-- read of every GPU operation, tracelens.report.infoshare). Same SQL as those rows of
-- _event_counts, so the figures are the same; the kernel table is not scanned (on a
-- 5M-kernel trace that scan costs about a census).
-- Without $runtime the runtime row is left out and its table not scanned (WHERE false:
-- DuckDB reads nothing; HAVING false: no row), for a caller that holds its figures too
-- (the report, whose util read every CUDA API call).
--
-- Parameters:
--   $runtime  BOOLEAN  true: the runtime row too
--
-- Rows: runtime (with $runtime), nvtx, graph (a kind whose table is absent counts 0).
-- Columns:
--   kind      VARCHAR  runtime | nvtx | graph (CUDA graph replays traced at graph level)
--   events    BIGINT   number of rows
--   first_ns  BIGINT   earliest start, ns from session start (NULL when no events)
--   last_ns   BIGINT   latest end (or start, for NVTX marks that have no end), ns
--                      (NVTX: of ranges and marks; the naming events, a domain's creation
--                      above all, are stamped when the program made them, which can be
--                      long before the capture started, and are not activity)
--   pids      BIGINT[] runtime: the processes with CUDA API calls (NULL when none); NULL
--                      for the others
SELECT 'runtime' AS kind, count(*) AS events, min(start) AS first_ns, max("end") AS last_ns,
       list(DISTINCT pid_of(globalTid)) FILTER (WHERE globalTid IS NOT NULL) AS pids
FROM runtime_calls
WHERE $runtime
HAVING $runtime
UNION ALL
SELECT 'nvtx', count(*), min(start) FILTER (WHERE NOT is_nvtx_naming(eventType)),
       max(coalesce("end", start)) FILTER (WHERE NOT is_nvtx_naming(eventType)), NULL
FROM nvtx_events
UNION ALL
SELECT 'graph', count(*), min(start), max("end"), NULL FROM graph_replays
