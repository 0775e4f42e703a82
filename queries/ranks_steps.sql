-- ranks_steps: the training steps of one rank's trace, found as NVTX ranges whose label
-- matches a regex, each placed where the GPU work it launched ran (an NVTX range is CPU
-- time; the kernels, memcpys and memsets its thread launched inside it, matched through the
-- launching API call's correlationId and process, run later on the GPU).
-- Needs the nvtx_text table (Trace.load_nvtx_text()).
-- Parameters:
--   $label_regex  VARCHAR  regex a step range's label matches (regexp_matches semantics)
-- Columns, one row per matching range that launched GPU work, by CPU start:
--   step         BIGINT   1-based, in CPU start order
--   label        VARCHAR  the range's label
--   cpu_start_ns BIGINT   the range, ns from session start
--   cpu_end_ns   BIGINT
--   start_ns     BIGINT   start of the first GPU operation it launched, ns
--   end_ns       BIGINT   end of the last one, ns
--   duration_ns  BIGINT   end_ns - start_ns, ns
--   kernels      BIGINT   kernels it launched
--   kernel_ns    BIGINT   their summed duration, ns
WITH ranges AS (
    SELECT n.start, n."end", n.globalTid, coalesce(n.text, s.value) AS label
    FROM nvtx_text AS n
    LEFT JOIN strings AS s ON s.id = n.textId
    WHERE is_nvtx_range(n.eventType, n."end")
      AND regexp_matches(coalesce(n.text, s.value), $label_regex)
),
calls AS (
    SELECT g.start AS range_start, g.globalTid AS range_tid, r.correlationId,
           r.globalTid >> 24 AS pid_key
    FROM runtime_calls AS r
    JOIN ranges AS g
      ON r.start >= g.start AND r.start <= g."end"
     AND (g.globalTid IS NULL OR r.globalTid = g.globalTid)
),
gpu AS (
    SELECT start, "end", correlationId, globalPid, TRUE AS is_kernel FROM kernels
    UNION ALL SELECT start, "end", correlationId, globalPid, FALSE FROM memcpys
    UNION ALL SELECT start, "end", correlationId, globalPid, FALSE FROM memsets
),
projected AS (
    SELECT calls.range_start, calls.range_tid,
           min(gpu.start) AS start_ns, max(gpu."end") AS end_ns,
           count(*) FILTER (WHERE gpu.is_kernel) AS kernels,
           coalesce(sum(gpu."end" - gpu.start) FILTER (WHERE gpu.is_kernel), 0) AS kernel_ns
    FROM gpu
    JOIN calls ON calls.correlationId = gpu.correlationId AND calls.pid_key = gpu.globalPid >> 24
    GROUP BY calls.range_start, calls.range_tid
)
SELECT
    row_number() OVER (ORDER BY g.start, g."end") AS step,
    g.label,
    g.start AS cpu_start_ns,
    g."end" AS cpu_end_ns,
    p.start_ns,
    p.end_ns,
    p.end_ns - p.start_ns AS duration_ns,
    p.kernels,
    p.kernel_ns::BIGINT AS kernel_ns
FROM ranges AS g
JOIN projected AS p
  ON p.range_start = g.start AND p.range_tid IS NOT DISTINCT FROM g.globalTid
ORDER BY step
