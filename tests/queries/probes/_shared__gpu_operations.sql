-- Probe of queries/_shared.sql's gpu_operations: every GPU operation, unfiltered.
SELECT kind, pid_of(globalPid) AS pid, correlationId, device, stream, start, "end", name_id,
       short_id
FROM gpu_operations()
ORDER BY start
