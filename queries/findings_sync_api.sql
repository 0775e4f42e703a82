-- findings_sync_api: host calls that block until issued CUDA work is complete, as
-- `nsys analyze` 2022.4's cuda-sync-api rule lists them (API names starting with
-- cudaDeviceSynchronize or cudaStreamSynchronize, case-insensitive as SQLite's LIKE).
-- Longest first.
--
-- Parameters: $pid, $start_ns, $end_ns (NULL: all; the window keeps calls that overlap it)
--
-- Columns:
--   duration_ns  BIGINT   length of the call, ns
--   start_ns     BIGINT   start of the call, ns from session start
--   pid          BIGINT   process id
--   tid          BIGINT   thread id
--   api_name     VARCHAR  the API function name (with nsys's version suffix)
SELECT
    r."end" - r.start AS duration_ns,
    r.start AS start_ns,
    pid_of(r.globalTid) AS pid,
    tid_of(r.globalTid) AS tid,
    s.value AS api_name
FROM filtered_runtime_calls($pid, $start_ns, $end_ns) AS r
JOIN strings AS s ON s.id = r.nameId
WHERE s.value ILIKE 'cudaDeviceSynchronize%' OR s.value ILIKE 'cudaStreamSynchronize%'
ORDER BY duration_ns DESC, start_ns
