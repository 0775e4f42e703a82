-- steps_range_tops: the top-level NVTX ranges of each thread (inside no other range of that
-- thread) with their family (the label with every run of digits replaced by '#':
-- decode_step_3 -> decode_step_#) and the family's figures as steps_range_families gives
-- them; tracelens.steps_ranges.range_families adds the GPU time launched inside them
-- (the rows of steps_range_families). A thread's top-level ranges start and end later
-- than the one before. Needs the nvtx_text table (Trace.load_nvtx_text()). No parameters.
--
-- Columns (by globalTid, start):
--   globalTid  BIGINT   the range's thread
--   start      BIGINT   range start, ns from session start
--   end        BIGINT   range end, ns
--   family     VARCHAR  label with digit runs replaced by '#' (NULL without a label)
--   example    VARCHAR  the first label of the family (by start)
--   ranges     BIGINT   top-level ranges of the family
WITH top AS (
    SELECT start, "end", globalTid, label, regexp_replace(label, '[0-9]+', '#', 'g') AS family
    FROM thread_ranges()
    WHERE top_level
),
families AS (
    SELECT family, arg_min(label, start) AS example, count(*) AS ranges FROM top GROUP BY family
)
SELECT t.globalTid, t.start, t."end", t.family, f.example, f.ranges
FROM top AS t
JOIN families AS f ON f.family IS NOT DISTINCT FROM t.family
ORDER BY t.globalTid, t.start
