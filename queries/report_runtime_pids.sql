-- report_runtime_pids: the processes with CUDA API calls (_event_counts's pids of the
-- runtime row), for the report's header when util has read the calls' other figures.
-- Columns:
--   pids  BIGINT[]  operating-system pids (pid_of(globalTid)); NULL when no call has one
SELECT list(DISTINCT pid_of(globalTid)) FILTER (WHERE globalTid IS NOT NULL) AS pids
FROM runtime_calls
