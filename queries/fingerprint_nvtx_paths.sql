-- fingerprint_nvtx_paths: for each CUDA API call that launched a kernel, the NVTX ranges on
-- its thread that enclose it, outermost first: the call's NVTX path. Calls inside no range
-- are absent.
--
-- Inputs: the nvtx_text table (Trace.load_nvtx_text). Run with merge_join_threshold = 0 (see
-- _nvtx_innermost.sql: DuckDB then plans the two time inequalities as an IEJoin; the thread
-- test is a difference for the same reason).
--
-- Parameters: none.
--
-- Columns:
--   pid             BIGINT   operating-system pid of the launching process
--   correlation_id  BIGINT   correlation id shared by the call and the GPU work it launched
--   ranges          STRUCT(label VARCHAR, start BIGINT, "end" BIGINT)[]
--                            the enclosing ranges, outermost first (by start, then the
--                            longest first): label (text, or its registered string), start
--                            and end in ns from session start
SELECT
    pid_of(c.globalTid) AS pid,
    c.correlationId AS correlation_id,
    list(
        {'label': coalesce(n.text, s.value, ''), 'start': n.start, 'end': n."end"}
        ORDER BY n.start, n."end" DESC, coalesce(n.text, s.value, '')
    ) AS ranges
FROM (
    SELECT globalTid, correlationId, start, "end"
    FROM runtime_calls
    WHERE (pid_of(globalTid), correlationId) IN (
        SELECT (pid_of(globalPid), correlationId) FROM kernels
    )
    QUALIFY row_number() OVER (
        PARTITION BY pid_of(globalTid), correlationId ORDER BY eventClass, start
    ) = 1
) AS c
JOIN nvtx_text AS n ON n.start <= c.start AND n."end" >= c."end"
LEFT JOIN strings AS s ON s.id = n.textId
WHERE n.globalTid - c.globalTid = 0
  AND is_nvtx_range(n.eventType, n."end")
GROUP BY ALL
ORDER BY pid, correlation_id
