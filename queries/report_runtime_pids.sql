-- report_runtime_pids: the processes with CUDA API calls (_event_counts's pids of the
-- runtime row), for the report's header when util has read the calls' other figures.
-- The calls' distinct threads first, then their processes: the DISTINCT over every call
-- runs on each DuckDB thread, where list(DISTINCT pid_of(...)) over every call ran on one
-- (5M calls, cached: ~0.044 -> ~0.012 CPU s).
-- Columns:
--   pids  BIGINT[]  operating-system pids (pid_of(globalTid)); NULL when no call has one
WITH threads AS (
    SELECT DISTINCT globalTid FROM runtime_calls WHERE globalTid IS NOT NULL
)
SELECT list(DISTINCT pid_of(globalTid)) AS pids
FROM threads
