-- api_processes: the processes whose threads made CUDA API calls (the runtime rows
-- cuda_api_summary counts), whatever the filters: what an empty `api --pid` result's hint
-- lists.
-- No parameters.
-- Columns:
--   pid  BIGINT  operating-system process id
SELECT DISTINCT pid_of(globalTid) AS pid
FROM runtime_calls
WHERE globalTid IS NOT NULL
ORDER BY pid
