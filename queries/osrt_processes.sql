-- osrt_processes: the processes whose threads made OS runtime calls (OSRT_API rows of
-- eventClass 27, the rows osrt_summary counts), whatever the filters: what an empty
-- `api --osrt --pid` result's hint lists.
-- No parameters.
-- Columns:
--   pid  BIGINT  operating-system process id
SELECT DISTINCT pid_of(globalTid) AS pid
FROM osrt_calls
WHERE eventClass = 27 AND globalTid IS NOT NULL
ORDER BY pid
