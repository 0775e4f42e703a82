-- timeline_page_bound: how far into the trace a timeline page can reach, so that the page
-- query (timeline_events.sql, $bound_ns) reads only that stretch instead of building and
-- sorting every event. The rows of a page are the first $rows events in start order (idle
-- gaps take places too, but each gap ends at an event's start), so every row of the page
-- starts no later than the $rows-th smallest event start.
--
-- Parameters (filters as timeline_events.sql; NULL means "no filter"):
--   $api               BOOLEAN  count CUDA API calls too
--   $device, $stream   BIGINT   GPU rows of that device / stream (NVTX and API stay)
--   $pid               BIGINT   operating-system process id: every kind of row
--   $start_ns, $end_ns BIGINT   time window, ns from session start
--   $selection         BIGINT   work selection id (work_selection, e.g. --nvtx), or NULL
--   $rows              BIGINT   offset + limit of the page (>= 1)
--
-- Columns:
--   events    BIGINT  kernels, memcpys, memsets, NVTX ranges (and API calls) in the window
--   bound_ns  BIGINT  the $rows-th smallest start among them, ns from session start; NULL
--                     when there are fewer (the page reaches the end: no bound), and when
--                     $rows is 1,000,000 or more
WITH starts AS (
    SELECT start FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
    UNION ALL
    SELECT start FROM filtered_memcpys($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
    UNION ALL
    SELECT start FROM filtered_memsets($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
    UNION ALL
    SELECT start
    FROM nvtx_text
    WHERE is_nvtx_range(eventType, "end")
      AND of_process(globalTid, $pid)
      AND in_window(start, "end", $start_ns, $end_ns)
    UNION ALL
    SELECT start
    FROM filtered_runtime_calls($pid, $start_ns, $end_ns)
    WHERE $api
)
-- min(start, n) keeps the n smallest starts; DuckDB takes n below 1,000,000 only, so a page
-- that deep gets no bound (its query reads the whole trace: slower, not wrong).
SELECT
    count(*) AS events,
    CASE WHEN $rows < 1000000 AND count(*) >= $rows
         THEN list_last(min(start, least($rows, 999999))) END AS bound_ns
FROM starts
