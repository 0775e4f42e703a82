-- _first_event: the start of the trace's first event of any kind (kernel, memcpy, memset,
-- CUDA API call, NVTX event, CUDA graph replay): what Start columns count from. The same
-- value as the smallest first_ns of _event_counts.sql, with one column read per table
-- instead of the counts and processes (for commands that need only the origin).
--
-- Columns:
--   first_ns  BIGINT  earliest start, ns from session start (NULL when there is no event;
--                     NVTX naming events, such as a domain's creation, are not events here)
SELECT least(
    (SELECT min(start) FROM kernels),
    (SELECT min(start) FROM memcpys),
    (SELECT min(start) FROM memsets),
    (SELECT min(start) FROM runtime_calls),
    (SELECT min(start) FROM nvtx_events WHERE NOT is_nvtx_naming(eventType)),
    (SELECT min(start) FROM graph_replays)
) AS first_ns
