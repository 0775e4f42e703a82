-- timeline_events: what happened, in time order: kernels, memcpys, memsets, CUDA graph
-- replays traced at graph level (filtered_graph_replays: their kernels are in no other
-- table) and NVTX ranges (CUDA API calls too with $api), and the idle gaps of each device longer than $gap_ns as
-- rows of their own. The NVTX ranges are those of nvtx_ranges(), named and timed as the
-- nvtx command has them (one left open at the end of the capture lasts until the latest
-- NVTX timestamp). Needs nvtx_ranges() (Trace.load_nvtx_text).
--
-- Parameters (filters: NULL means "no filter"):
--   $origin_ns         BIGINT     what start_ns counts from (the trace's first event), ns
--                                 from session start
--   $api               BOOLEAN    include CUDA API calls (runtime and driver)
--   $gap_ns            BIGINT     list idle gaps longer than this on each device, ns
--   $name_kind         VARCHAR    kernel name: 'demangled' | 'short' | 'mangled'
--   $device            BIGINT     CUDA device ordinal: GPU rows (and gaps) of that device;
--                                 NVTX ranges and API calls are host-side and kept
--   $stream            BIGINT     CUDA stream id: GPU rows of that stream (same rule)
--   $pid               BIGINT     operating-system process id: every kind of row
--   $start_ns, $end_ns BIGINT     time window, ns from session start: as nsys, keep an event
--                                 that ends at or after $start_ns and starts before
--                                 $end_ns (in_window in _shared.sql)
--   $selection         BIGINT     a work_selection id (--nvtx, --step): only the GPU work in it
--   $limit, $offset    BIGINT     rows to return (NULL: all) and rows to skip first
--   $from_ns           BIGINT     only rows starting at or after this, ns from session
--                                 start (timeline_page_rows.sql; $offset then counts from
--                                 there); NULL: no lower bound
--   $bound_ns          BIGINT     no row starting later can be on the page
--                                 (timeline_page_rows.sql), ns from session start; NULL:
--                                 no bound. The stretch read is a window of its own,
--                                 [max($start_ns, $from_ns), min($end_ns, $bound_ns + 1)):
--                                 $bound_ns is the stretch's last ns, $end_ns the first
--                                 past the window. With either bound, total_rows counts
--                                 only the rows read (from $from_ns, up to a little past
--                                 $bound_ns)
--   $edge_devices, $edge_busy, $edge_next  VARCHAR  JSON lists of integers
--                                 (tracelens.trace.list_param): per device, the latest end of its GPU
--                                 rows that start before $from_ns and the first start after
--                                 $bound_ns (timeline_page_rows.sql's columns; NULL: found
--                                 here). Given, only the GPU rows of the stretch are read
--                                 (no window then: $start_ns and $end_ns are NULL)
--
-- A gap is a stretch of a device with none of the kernels, memcpys, memsets or graph
-- replays that pass
-- $device/$stream/$pid/$selection running: from the latest end so far to the next start.
-- Gaps are found before the time window applies, and the window keeps them by the same rule as
-- events (so a gap that begins before the window and ends inside it is listed).
--
-- Only the stretch that can be on the page is kept: the GPU rows in the window that start
-- by $bound_ns and end at or after $from_ns, and, per device, the latest end before that
-- (before the window, or before $from_ns) and the first start after the stretch, which are all the gaps at its borders depend on. All three come from one
-- pass over the GPU tables (one grouped aggregate), so a 10 ms window or the first page of
-- a 5M-kernel trace neither builds nor sorts the whole union.
--
-- Columns:
--   start_ns          BIGINT   start, ns after $origin_ns
--   duration_ns       BIGINT   duration, ns
--   kind              VARCHAR  'kernel', 'memcpy', 'memset', 'graph', 'nvtx', 'api' or
--                              'gap'
--   device            BIGINT   CUDA device ordinal (GPU rows and gaps)
--   stream            BIGINT   CUDA stream id (GPU rows)
--   pid               BIGINT   process id (not for gaps)
--   tid               BIGINT   thread id (NVTX ranges, API calls)
--   correlation_id    BIGINT   CUPTI correlation id (GPU rows, API calls; per process)
--   bytes             BIGINT   bytes copied or set (memcpy, memset)
--   throughput_gbps   DOUBLE   bytes / duration, GB/s (10^9 bytes/s = bytes/ns), 0.001
--   name              VARCHAR  kernel name; memcpy label (memcpy_labels, or '[CUDA memcpy
--                              kind N]' as memory names it); 'memset'; 'CUDA graph
--                              <graphId>' (a replay, as the steps name it; 'CUDA graph
--                              replay' without an id); NVTX range label; API
--                              call (version suffix _vNNNN removed, as nsys); 'idle';
--                              '<unknown string id N>' for a kernel or API call whose
--                              name id StringIds lacks (string_or_id, as every command)
--   total_rows        BIGINT   rows before $limit/$offset
-- The GPU rows read: with the edges given those of the stretch (a filter on start and end
-- that DuckDB pushes into the scan), else every one.
WITH gpu AS (
    SELECT
        start,
        "end",
        'kernel' AS kind,
        deviceId AS device,
        streamId AS stream,
        globalPid,
        correlationId,
        CAST(NULL AS BIGINT) AS bytes,
        CASE $name_kind
            WHEN 'short' THEN shortName
            WHEN 'mangled' THEN coalesce(mangledName, demangledName)
            ELSE demangledName
        END AS name_id,
        CAST(NULL AS VARCHAR) AS label
    FROM filtered_kernels(
        $device, $pid, $stream,
        CASE WHEN $edge_devices IS NOT NULL THEN $from_ns END,
        CASE WHEN $edge_devices IS NOT NULL THEN $bound_ns + 1 END,
        selection := $selection
    )
    UNION ALL
    SELECT
        m.start, m."end", 'memcpy', m.deviceId, m.streamId, m.globalPid, m.correlationId,
        m.bytes, NULL, coalesce(l.label, '[CUDA memcpy kind ' || m.copyKind || ']')
    FROM filtered_memcpys(
        $device, $pid, $stream,
        CASE WHEN $edge_devices IS NOT NULL THEN $from_ns END,
        CASE WHEN $edge_devices IS NOT NULL THEN $bound_ns + 1 END,
        selection := $selection
    ) AS m
    LEFT JOIN memcpy_labels AS l ON l.copyKind = m.copyKind
    UNION ALL
    SELECT start, "end", 'memset', deviceId, streamId, globalPid, correlationId, bytes, NULL, 'memset'
    FROM filtered_memsets(
        $device, $pid, $stream,
        CASE WHEN $edge_devices IS NOT NULL THEN $from_ns END,
        CASE WHEN $edge_devices IS NOT NULL THEN $bound_ns + 1 END,
        selection := $selection
    )
    UNION ALL
    SELECT start, "end", 'graph', deviceId, streamId, globalPid, correlationId, NULL, NULL,
           coalesce('CUDA graph ' || graphId, 'CUDA graph replay')
    FROM filtered_graph_replays(
        $device, $pid, $stream,
        CASE WHEN $edge_devices IS NOT NULL THEN $from_ns END,
        CASE WHEN $edge_devices IS NOT NULL THEN $bound_ns + 1 END,
        selection := $selection
    )
),
read_per_device AS (
    SELECT
        device,
        max("end") FILTER (WHERE "end" < greatest($start_ns, $from_ns)) AS busy_before,
        min(start) FILTER (WHERE start >= least($end_ns, $bound_ns + 1)) AS next_after,
        list({
            'start': start, 'end': "end", 'kind': kind, 'stream': stream,
            'globalPid': globalPid, 'correlationId': correlationId, 'bytes': bytes,
            'name_id': name_id, 'label': label
        }) FILTER (
            WHERE in_window(start, "end", greatest($start_ns, $from_ns), least($end_ns, $bound_ns + 1))
        ) AS near
    FROM gpu
    GROUP BY device
),
given_edges AS (
    SELECT
        unnest(bigint_list($edge_devices)) AS device,
        unnest(bigint_list($edge_busy)) AS busy_before,
        unnest(bigint_list($edge_next)) AS next_after
),
per_device AS (
    -- rows read from the stretch alone say nothing of what lies outside it: the edges do
    SELECT
        coalesce(r.device, e.device) AS device,
        CASE WHEN $edge_devices IS NULL THEN r.busy_before ELSE e.busy_before END
            AS busy_before,
        CASE WHEN $edge_devices IS NULL THEN r.next_after ELSE e.next_after END AS next_after,
        r.near
    FROM read_per_device AS r
    FULL JOIN given_edges AS e ON e.device = r.device
),
gpu_kept AS (
    SELECT device, unnest(near, recursive := true)
    FROM per_device
),
gap_edges AS (
    -- the stretch's rows, and per device the latest end before it (start NULL: first in
    -- order) and the first start after it (end NULL)
    SELECT device, start, "end" FROM gpu_kept
    UNION ALL
    SELECT device, NULL, busy_before FROM per_device WHERE busy_before IS NOT NULL
    UNION ALL
    SELECT device, next_after, NULL FROM per_device WHERE next_after IS NOT NULL
),

gaps AS (
    SELECT device, busy_until AS start, start AS "end"
    FROM (
        SELECT
            device,
            start,
            max("end") OVER (
                PARTITION BY device ORDER BY start ASC NULLS FIRST, "end"
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
            ) AS busy_until
        FROM gap_edges
    )
    WHERE start - busy_until > $gap_ns
),
host AS (
    SELECT n.start, n."end", 'nvtx' AS kind, n.global_tid AS globalTid,
           CAST(NULL AS BIGINT) AS correlationId, n.name
    FROM nvtx_ranges() AS n
    WHERE in_window(n.start, n."end", greatest($start_ns, $from_ns), least($end_ns, $bound_ns + 1))
    UNION ALL
    SELECT r.start, r."end", 'api', r.globalTid, r.correlationId,
           string_or_id(api_name(s.value), r.nameId)
    FROM runtime_calls AS r
    LEFT JOIN strings AS s ON s.id = r.nameId
    WHERE $api
      AND in_window(r.start, r."end", greatest($start_ns, $from_ns), least($end_ns, $bound_ns + 1))
),
rows AS (
    SELECT
        g.start, g."end", g.kind, g.device, g.stream,
        pid_of(g.globalPid) AS pid,
        CAST(NULL AS BIGINT) AS tid,
        g.correlationId AS correlation_id,
        g.bytes,
        coalesce(g.label, string_or_id(s.value, g.name_id)) AS name
    FROM gpu_kept AS g
    LEFT JOIN strings AS s ON s.id = g.name_id
    UNION ALL
    SELECT start, "end", 'gap', device, NULL, NULL, NULL, NULL, NULL, 'idle'
    FROM gaps
    UNION ALL
    SELECT start, "end", kind, NULL, NULL,
           pid_of(globalTid), tid_of(globalTid), correlationId, NULL, name
    FROM host
    WHERE of_process(globalTid, $pid)
)
SELECT
    start - $origin_ns AS start_ns,
    "end" - start AS duration_ns,
    kind,
    device,
    stream,
    pid,
    tid,
    correlation_id,
    bytes,
    CASE WHEN bytes IS NOT NULL AND "end" > start THEN round(bytes / ("end" - start), 3) END
        AS throughput_gbps,
    name,
    -- A scalar count, not count(*) OVER (): DuckDB 1.5 intermittently fails a window over
    -- () under ORDER BY ... LIMIT with "INTERNAL Error: Attempted to access index 0 within
    -- vector of size 0" (duckdb/duckdb#22352; seen once in our CI).
    (SELECT count(*) FROM rows WHERE in_window(start, "end", $start_ns, $end_ns)
        AND ($from_ns IS NULL OR start >= $from_ns)) AS total_rows
FROM rows
-- Rows that start before $from_ns (the GPU rows spanning it, gaps whose busy time began
-- before the stretch read) were counted by timeline_page_rows.sql, not here.
WHERE in_window(start, "end", $start_ns, $end_ns)
  AND ($from_ns IS NULL OR start >= $from_ns)
ORDER BY
    start,
    CASE kind WHEN 'nvtx' THEN 0 WHEN 'api' THEN 1 WHEN 'gap' THEN 2 ELSE 3 END,
    "end" DESC,
    device,
    stream,
    pid,
    tid,
    correlation_id,
    name
LIMIT $limit OFFSET $offset
