-- Probe of queries/_nvtx_overlap_holders.sql: the nvtx_overlap_holders table it creates.
SELECT pid_of(global_pid) AS pid, correlation_id, range_id, first_ns, last_ns
FROM nvtx_overlap_holders
ORDER BY correlation_id, range_id
