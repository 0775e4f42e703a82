-- timeline_events: what happened, in time order: kernels, memcpys, memsets and NVTX ranges
-- (CUDA API calls too with $api), and the idle gaps of each device longer than $gap_ns as
-- rows of their own. Needs the nvtx_text table (Trace.load_nvtx_text).
--
-- Parameters (filters: NULL means "no filter"):
--   $origin_ns         BIGINT     what start_ns counts from (the trace's first event), ns
--                                 from session start
--   $api               BOOLEAN    include CUDA API calls (runtime and driver)
--   $gap_ns            BIGINT     list idle gaps longer than this on each device, ns
--   $name_kind         VARCHAR    kernel name: 'demangled' | 'short' | 'mangled'
--   $copy_labels       VARCHAR[]  memcpy labels by copyKind: element copyKind + 1
--   $device            BIGINT     CUDA device ordinal: GPU rows (and gaps) of that device;
--                                 NVTX ranges and API calls are host-side and kept
--   $stream            BIGINT     CUDA stream id: GPU rows of that stream (same rule)
--   $pid               BIGINT     operating-system process id: every kind of row
--   $start_ns, $end_ns BIGINT     time window, ns from session start: as nsys, keep an event
--                                 that starts in, ends in, or spans the window
--   $selection         BIGINT     a work_selection id (--nvtx, --step): only the GPU work in it
--   $limit, $offset    BIGINT     rows to return (NULL: all) and rows to skip first
--
-- A gap is a stretch of a device with none of the kernels, memcpys or memsets that pass
-- $device/$stream/$pid/$selection running: from the latest end so far to the next start.
-- Gaps are found before the time window applies, and the window keeps them by the same rule as
-- events (so a gap that begins before the window and ends inside it is listed).
--
-- Columns:
--   start_ns          BIGINT   start, ns after $origin_ns
--   duration_ns       BIGINT   duration, ns
--   kind              VARCHAR  'kernel', 'memcpy', 'memset', 'nvtx', 'api' or 'gap'
--   device            BIGINT   CUDA device ordinal (GPU rows and gaps)
--   stream            BIGINT   CUDA stream id (GPU rows)
--   pid               BIGINT   process id (not for gaps)
--   tid               BIGINT   thread id (NVTX ranges, API calls)
--   correlation_id    BIGINT   CUPTI correlation id (GPU rows, API calls; per process)
--   bytes             BIGINT   bytes copied or set (memcpy, memset)
--   throughput_gbps   DOUBLE   bytes / duration, GB/s (10^9 bytes/s = bytes/ns), 0.001
--   name              VARCHAR  kernel name; memcpy label; 'memset'; NVTX range label; API
--                              call (version suffix _vNNNN removed, as nsys); 'idle'
--   total_rows        BIGINT   rows before $limit/$offset
WITH gpu_kept AS (
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
    FROM filtered_kernels($device, $pid, $stream, NULL, NULL, selection := $selection)
    UNION ALL
    SELECT
        start, "end", 'memcpy', deviceId, streamId, globalPid, correlationId, bytes, NULL,
        coalesce($copy_labels[copyKind + 1], 'copy kind ' || copyKind)
    FROM filtered_memcpys($device, $pid, $stream, NULL, NULL, selection := $selection)
    UNION ALL
    SELECT start, "end", 'memset', deviceId, streamId, globalPid, correlationId, bytes, NULL, 'memset'
    FROM filtered_memsets($device, $pid, $stream, NULL, NULL, selection := $selection)
),

gaps AS (
    SELECT device, busy_until AS start, start AS "end"
    FROM (
        SELECT
            device,
            start,
            max("end") OVER (
                PARTITION BY device ORDER BY start, "end"
                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
            ) AS busy_until
        FROM gpu_kept
    )
    WHERE start - busy_until > $gap_ns
),
host AS (
    SELECT start, "end", 'nvtx' AS kind, globalTid, CAST(NULL AS BIGINT) AS correlationId,
           coalesce(n.text, s.value) AS name
    FROM nvtx_text AS n
    LEFT JOIN strings AS s ON s.id = n.textId
    WHERE n.eventType IN (59, 60, 70, 71) AND n."end" IS NOT NULL
    UNION ALL
    SELECT r.start, r."end", 'api', r.globalTid, r.correlationId,
           regexp_replace(s.value, '_v.{4}$', '')
    FROM runtime_calls AS r
    LEFT JOIN strings AS s ON s.id = r.nameId
    WHERE $api
),
rows AS (
    SELECT
        g.start, g."end", g.kind, g.device, g.stream,
        (g.globalPid >> 24) & 16777215 AS pid,
        CAST(NULL AS BIGINT) AS tid,
        g.correlationId AS correlation_id,
        g.bytes,
        coalesce(g.label, s.value, '<unknown string id ' || g.name_id || '>') AS name
    FROM gpu_kept AS g
    LEFT JOIN strings AS s ON s.id = g.name_id
    UNION ALL
    SELECT start, "end", 'gap', device, NULL, NULL, NULL, NULL, NULL, 'idle'
    FROM gaps
    UNION ALL
    SELECT start, "end", kind, NULL, NULL,
           (globalTid >> 24) & 16777215, globalTid & 16777215, correlationId, NULL, name
    FROM host
    WHERE ($pid IS NULL OR ((globalTid >> 24) & 16777215) = $pid)
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
    count(*) OVER () AS total_rows
FROM rows
WHERE ($start_ns IS NULL OR "end" >= $start_ns)
  AND ($end_ns IS NULL OR start <= $end_ns)
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
