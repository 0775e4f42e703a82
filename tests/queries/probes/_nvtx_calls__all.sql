-- Probe of queries/_nvtx_calls.sql: the nvtx_calls table it creates.
SELECT pid_of(global_pid) AS pid, correlation_id, tid_of(global_tid) AS tid, start, "end"
FROM nvtx_calls
ORDER BY correlation_id
