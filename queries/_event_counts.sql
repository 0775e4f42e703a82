-- _event_counts: how many events of each kind the export holds, and when they start and end.
-- One row per kind, always six rows (a kind whose table is absent counts 0).
-- Columns:
--   kind      VARCHAR  kernel | memcpy | memset | runtime | nvtx | graph (CUDA graph replays
--                      traced at graph level: their kernels are not in the kernel count)
--   events    BIGINT   number of rows
--   first_ns  BIGINT   earliest start, ns from session start (NULL when no events)
--   last_ns   BIGINT   latest end (or start, for NVTX marks that have no end), ns
SELECT 'kernel' AS kind, count(*) AS events, min(start) AS first_ns, max("end") AS last_ns
FROM kernels
UNION ALL
SELECT 'memcpy', count(*), min(start), max("end") FROM memcpys
UNION ALL
SELECT 'memset', count(*), min(start), max("end") FROM memsets
UNION ALL
SELECT 'runtime', count(*), min(start), max("end") FROM runtime_calls
UNION ALL
SELECT 'nvtx', count(*), min(start), max(coalesce("end", start)) FROM nvtx_events
UNION ALL
SELECT 'graph', count(*), min(start), max("end") FROM graph_replays
