-- steps_range_families: candidate step markers among the NVTX ranges: the top-level ranges
-- of each thread (inside no other range of that thread), grouped by family (the label with
-- every run of digits replaced by '#': decode_step_3 -> decode_step_#), with how much of
-- the GPU time passing the filter was launched inside them (the launching API call starts
-- inside the range, on its thread). One row per family, most GPU time first.
-- Needs the nvtx_text table (Trace.load_nvtx_text()).
--
-- Parameters: $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter
--
-- Columns:
--   family        VARCHAR  label with digit runs replaced by '#'
--   example       VARCHAR  the first label of the family (by start)
--   ranges        BIGINT   top-level ranges of the family
--   gpu_ns        BIGINT   summed duration of the GPU operations launched inside them, ns
--   total_gpu_ns  BIGINT   summed duration of all GPU operations that pass the filter, ns
WITH labelled AS (
    SELECT n.start, n."end", n.globalTid, coalesce(n.text, s.value) AS label
    FROM nvtx_text AS n
    LEFT JOIN strings AS s ON s.id = n.textId
    WHERE is_nvtx_range(n.eventType, n."end") AND n.globalTid IS NOT NULL
),
nesting AS (
    SELECT *, max("end") OVER (
        PARTITION BY globalTid ORDER BY start, "end" DESC
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS enclosing_end
    FROM labelled
),
top AS (
    SELECT start, "end", globalTid, label, regexp_replace(label, '[0-9]+', '#', 'g') AS family
    FROM nesting
    WHERE enclosing_end IS NULL OR enclosing_end < "end"
),
calls AS (
    SELECT r.correlationId, pid_of(r.globalTid) AS pid, t.family
    FROM runtime_calls AS r
    ASOF JOIN top AS t ON t.globalTid = r.globalTid AND t.start <= r.start
    WHERE r.start <= t."end"
),
work AS (
    SELECT w."end" - w.start AS dur, c.family
    FROM gpu_work($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS w
    LEFT JOIN calls AS c ON c.correlationId = w.correlationId AND c.pid = pid_of(w.globalPid)
),
families AS (
    SELECT family, arg_min(label, start) AS example, count(*) AS ranges FROM top GROUP BY family
),
covered AS (
    SELECT family, sum(dur) AS gpu_ns FROM work WHERE family IS NOT NULL GROUP BY family
)
SELECT
    f.family,
    f.example,
    f.ranges,
    coalesce(c.gpu_ns, 0)::BIGINT AS gpu_ns,
    (SELECT coalesce(sum(dur), 0) FROM work)::BIGINT AS total_gpu_ns
FROM families AS f
LEFT JOIN covered AS c USING (family)
ORDER BY gpu_ns DESC, f.family
