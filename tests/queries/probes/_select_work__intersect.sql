-- Probe of queries/_select_work.sql: the work_selection rows it stored.
SELECT selection_id, pid_of(globalPid) AS pid, correlationId
FROM work_selection
ORDER BY selection_id, pid, correlationId
