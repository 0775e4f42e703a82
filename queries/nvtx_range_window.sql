-- nvtx_range_window: where the GPU work launched inside the NVTX ranges whose label matches
-- a pattern ran, to narrow an analysis to e.g. one decode step. An NVTX range is CPU time;
-- the kernels, memcpys and memsets its thread launched inside it (matched through the
-- launching API call's correlationId and process) usually run later on the GPU, so the
-- window is theirs, not the range's. One row.
-- Needs the nvtx_text table (Trace.load_nvtx_text()).
-- Parameters:
--   $pattern  VARCHAR  label, or a glob pattern (* ? [..]): 'decode_step_3', 'decode_step_*'
-- Columns:
--   ranges    BIGINT  matching ranges (marks, which have no end, are not ranges)
--   gpu_ops   BIGINT  GPU operations launched inside them
--   start_ns  BIGINT  start of the first of those operations, ns from session start
--   end_ns    BIGINT  end of the last of them, ns from session start
WITH ranges AS (
    SELECT n.start, n."end", n.globalTid
    FROM nvtx_text AS n
    LEFT JOIN strings AS s ON s.id = n.textId
    WHERE n."end" IS NOT NULL
      AND coalesce(n.text, s.value) GLOB $pattern
),
calls AS (
    SELECT DISTINCT r.correlationId, r.globalTid >> 24 AS pid_key
    FROM runtime_calls AS r
    JOIN ranges AS g
      ON r.start >= g.start AND r.start <= g."end"
     AND (g.globalTid IS NULL OR r.globalTid = g.globalTid)
),
gpu AS (
    SELECT start, "end", correlationId, globalPid FROM kernels
    UNION ALL SELECT start, "end", correlationId, globalPid FROM memcpys
    UNION ALL SELECT start, "end", correlationId, globalPid FROM memsets
)
SELECT
    (SELECT count(*) FROM ranges) AS ranges,
    count(gpu.start) AS gpu_ops,
    min(gpu.start) AS start_ns,
    max(gpu."end") AS end_ns
FROM gpu
JOIN calls ON calls.correlationId = gpu.correlationId AND calls.pid_key = gpu.globalPid >> 24
