-- Probe of queries/_nvtx_marks.sql: the nvtx_call_ranges relation tracelens.nvtx_sweep
-- makes from the marks (each call's innermost range), chunk by chunk.
SELECT pid_of(global_pid) AS pid, correlation_id, tid_of(global_tid) AS tid, range_id
FROM nvtx_call_ranges
ORDER BY correlation_id
