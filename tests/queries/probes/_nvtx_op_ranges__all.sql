-- Probe of queries/_nvtx_op_ranges.sql: the nvtx_op_ranges table it creates.
SELECT kind, pid_of(globalPid) AS pid, correlationId, device, start, "end", name_id, short_id,
       tid_of(global_tid) AS tid, range_id
FROM nvtx_op_ranges
ORDER BY start
