-- _event_counts: how many events of each kind the export holds, and when they start and end.
-- One row per kind, always six rows (a kind whose table is absent counts 0).
-- Columns:
--   kind      VARCHAR  kernel | memcpy | memset | runtime | nvtx | graph (CUDA graph replays
--                      traced at graph level: their kernels are not in the kernel count)
--   events    BIGINT   number of rows
--   first_ns  BIGINT   earliest start, ns from session start (NULL when no events)
--   last_ns   BIGINT   latest end (or start, for NVTX marks that have no end), ns
--                      (NVTX: of ranges and marks; the naming events, a domain's creation
--                      above all, are stamped when the program made them, which can be
--                      long before the capture started, and are not activity)
--   pids      BIGINT[] the processes with GPU work or CUDA API calls of this kind (kernel,
--                      memcpy, memset, runtime; NULL for the others and when none)
--
-- One pass per table (the pids come from the same scan as the counts): on a 5M-kernel
-- trace every extra scan of the kernel or runtime table costs about as much as census.
SELECT 'kernel' AS kind, * FROM work_span('kernels')
UNION ALL
SELECT 'memcpy', * FROM work_span('memcpys')
UNION ALL
SELECT 'memset', * FROM work_span('memsets')
UNION ALL
SELECT 'runtime', count(*), min(start), max("end"),
       list(DISTINCT pid_of(globalTid)) FILTER (WHERE globalTid IS NOT NULL)
FROM runtime_calls
UNION ALL
SELECT 'nvtx', count(*), min(start) FILTER (WHERE NOT is_nvtx_naming(eventType)),
       max(coalesce("end", start)) FILTER (WHERE NOT is_nvtx_naming(eventType)), NULL
FROM nvtx_events
UNION ALL
SELECT 'graph', count(*), min(start), max("end"), NULL FROM graph_replays
