-- util_window: the capture span that util accounts over when no window is given: the first
-- start and the last end of any event (kernels, memcpys, memsets, CUDA API calls, NVTX
-- events, CUDA graph replays), the same values as TraceInfo's start_ns and end_ns
-- (_event_counts.sql), without its counts and processes: on a 5M-kernel trace those cost
-- ~1.9 CPU s read directly, this ~1.3 (two columns per table, no DISTINCT).
--
-- Parameters:
--   $gpu  BOOLEAN  read the GPU operation tables (kernels, memcpys, memsets, graph replays)
--                  too; false when the caller has read every GPU operation already and
--                  takes their span itself (DuckDB then skips those scans: ~0.6 CPU s on a
--                  5M-kernel trace read directly)
--   $api  BOOLEAN  read the CUDA API calls too; false when the caller has read them
--                  (util_calls.sql) and takes their span itself
--
-- Columns:
--   first_ns  BIGINT  earliest start, ns from session start (NULL when there is no event)
--   last_ns   BIGINT  latest end (or start, for NVTX marks that have no end), ns
WITH spans AS (
    SELECT min(start) AS first_ns, max("end") AS last_ns FROM kernels WHERE $gpu
    UNION ALL
    SELECT min(start), max("end") FROM memcpys WHERE $gpu
    UNION ALL
    SELECT min(start), max("end") FROM memsets WHERE $gpu
    UNION ALL
    SELECT min(start), max("end") FROM runtime_calls WHERE $api
    UNION ALL
    SELECT min(start), max(coalesce("end", start)) FROM nvtx_events
    UNION ALL
    SELECT min(start), max("end") FROM graph_replays WHERE $gpu
)
SELECT min(first_ns)::BIGINT AS first_ns, max(last_ns)::BIGINT AS last_ns FROM spans
