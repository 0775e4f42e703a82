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
WITH top AS (
    SELECT start, "end", globalTid, label, regexp_replace(label, '[0-9]+', '#', 'g') AS family
    FROM thread_ranges()
    WHERE top_level
),
calls AS (
    SELECT correlationId, pid, family FROM calls_in_ranges('top')
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
