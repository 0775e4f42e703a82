-- Probe of queries/_nvtx_call_ranges.sql: the nvtx_call_ranges table tracelens.nvtx fills
-- from it, chunk by chunk.
SELECT pid_of(global_pid) AS pid, correlation_id, tid_of(global_tid) AS tid, range_id
FROM nvtx_call_ranges
ORDER BY correlation_id
