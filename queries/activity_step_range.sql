-- activity_step_range: the first instance of the step-like NVTX range and where the GPU work
-- it launched ran. Of the labels that repeat (compared with their digits blanked, so
-- 'decode_step_1', 'decode_step_2', ... are one label), the longest on average, but not
-- longer than $max_ns; its earliest range. The GPU work is the kernels, memcpys and memsets
-- launched by the range's thread inside it (matched through the launching API call's
-- correlationId and process). Needs the nvtx_text table (Trace.load_nvtx_text()).
--
-- Parameters:
--   $max_ns  BIGINT  longest average duration a step may have, ns (NULL or 0: no bound)
--
-- Columns (no row when no label repeats):
--   start      BIGINT   range start, ns from session start (CPU time)
--   "end"      BIGINT   range end
--   label      VARCHAR  its text
--   tid        BIGINT   globalTid of its thread
--   repeats    BIGINT   ranges with this label (digits blanked), this one included
--   avg_ns     DOUBLE   their average duration, ns
--   gpu_start  BIGINT   earliest start of the GPU work it launched (NULL: none)
--   gpu_end    BIGINT   latest end of that work
--   events     BIGINT   GPU operations it launched
WITH ranges AS (
    SELECT n.start, n."end", coalesce(n.text, s.value) AS label, n.globalTid AS tid,
           regexp_replace(coalesce(n.text, s.value, ''), '[0-9]+', '#', 'g') AS shape
    FROM nvtx_text AS n
    LEFT JOIN strings AS s ON s.id = n.textId
    WHERE is_nvtx_range(n.eventType, n."end")
),
shapes AS (
    SELECT shape, count(*) AS n, avg("end" - start) AS avg_ns, min(start) AS first_ns
    FROM ranges
    GROUP BY shape
),
best AS (
    SELECT shape, n, avg_ns FROM shapes
    WHERE n >= 2 AND avg_ns > 0 AND (coalesce($max_ns, 0) = 0 OR avg_ns <= $max_ns)
    ORDER BY avg_ns DESC, first_ns
    LIMIT 1
),
step AS (
    SELECT r.start, r."end", r.label, r.tid, best.n AS repeats, best.avg_ns
    FROM ranges AS r JOIN best USING (shape)
    WHERE r.label IS NOT NULL
    ORDER BY r.start, r."end" DESC
    LIMIT 1
),
calls AS (
    SELECT c.correlationId, pid_of(c.globalTid) AS pid
    FROM runtime_calls AS c, step
    WHERE c.start >= step.start AND c.start <= step."end"
      AND (step.tid IS NULL OR c.globalTid = step.tid)
),
gpu AS (
    SELECT start, "end", correlationId, globalPid FROM kernels
    UNION ALL SELECT start, "end", correlationId, globalPid FROM memcpys
    UNION ALL SELECT start, "end", correlationId, globalPid FROM memsets
),
launched AS (
    SELECT min(gpu.start) AS gpu_start, max(gpu."end") AS gpu_end, count(*) AS events
    FROM gpu
    JOIN calls ON calls.correlationId = gpu.correlationId AND calls.pid = pid_of(gpu.globalPid)
)
SELECT step.start, step."end", step.label, step.tid, step.repeats, step.avg_ns,
       launched.gpu_start, launched.gpu_end, launched.events
FROM step, launched
