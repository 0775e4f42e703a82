-- _active_pids: processes that did GPU work or called the CUDA API.
-- Columns:
--   pid  BIGINT  operating-system process id, decoded from globalPid/globalTid
--               (bits 24-47 of nsys's global id)
SELECT DISTINCT pid FROM (
    SELECT (globalPid >> 24) & 16777215 AS pid FROM kernels
    UNION ALL
    SELECT (globalPid >> 24) & 16777215 FROM memcpys
    UNION ALL
    SELECT (globalPid >> 24) & 16777215 FROM memsets
    UNION ALL
    SELECT (globalTid >> 24) & 16777215 FROM runtime_calls
)
WHERE pid IS NOT NULL
ORDER BY pid
