-- steps_range_open: the NVTX ranges that would be steps (as steps_range_list lists them)
-- but were left open at the end of the capture (end NULL: the capture stopped inside
-- them), with the step number each would have. thread_ranges() leaves them out: cut by the
-- capture's end, such a range is no complete step, so tracelens.steps leaves it out of the
-- steps and says so. As there, an open range lasts until the latest timestamp of any NVTX
-- event (nsys's nvtx reports time it so) for what it encloses; a matching range inside an
-- earlier one of its thread with the same label is part of that one (outer_step_ranges in
-- _step_marks.sql, restated here: it keeps no column saying which ranges are open).
-- Only the processes with an open range are read past the first filter.
-- Needs the nvtx_text table (Trace.load_nvtx_text()).
--
-- Parameters:
--   $pattern    VARCHAR  an RE2 regex matched in full when $match = 'regex'; a family
--                        (label with digit runs as '#') when $match = 'family'
--   $match      VARCHAR  'regex' | 'family'
--   $top_level  BOOLEAN  only ranges inside no other range of their thread
--
-- Columns (by step, globalTid):
--   step       BIGINT   the 1-based step number the range would have in its process
--                        (steps_range_list's numbering, counting it)
--   label      VARCHAR  the range's label (its text, else its registered string)
--   start      BIGINT   range start, ns from session start
--   globalTid  BIGINT   the range's thread
WITH last_ts AS (
    SELECT greatest(max(start), max("end")) AS ts FROM nvtx_text
),
open_processes AS (
    SELECT DISTINCT globalTid >> 24 AS process
    FROM nvtx_text
    WHERE "end" IS NULL AND is_nvtx_range_type(eventType) AND globalTid IS NOT NULL
),
ranges AS (
    -- thread_ranges() of _nvtx_ranges.sql, with the open ranges and a column saying so
    SELECT start, "end", closed, globalTid, label,
           enclosing_end IS NULL OR enclosing_end < "end" AS top_level
    FROM (
        SELECT n.start, coalesce(n."end", (SELECT ts FROM last_ts)) AS "end",
               n."end" IS NOT NULL AS closed, n.globalTid, coalesce(n.text, s.value) AS label,
               max(coalesce(n."end", (SELECT ts FROM last_ts))) OVER (
                   PARTITION BY n.globalTid
                   ORDER BY n.start, coalesce(n."end", (SELECT ts FROM last_ts)) DESC,
                            n."end" IS NOT NULL
                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS enclosing_end
        FROM nvtx_text AS n
        LEFT JOIN strings AS s ON s.id = n.textId
        WHERE is_nvtx_range_type(n.eventType) AND n.globalTid IS NOT NULL
          AND n.globalTid >> 24 IN (SELECT process FROM open_processes)
    )
),
matching AS (
    SELECT start, "end", closed, globalTid, label
    FROM ranges
    WHERE (NOT $top_level OR top_level)
      AND CASE $match
          WHEN 'family' THEN regexp_replace(label, '[0-9]+', '#', 'g') = $pattern
          ELSE regexp_full_match(label, $pattern)
      END
),
outer_ranges AS (
    SELECT start, "end", closed, globalTid, label
    FROM (
        SELECT *, max("end") OVER (
                   PARTITION BY globalTid, label ORDER BY start, "end" DESC, closed
                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS same_label_end
        FROM matching
    )
    WHERE same_label_end IS NULL OR same_label_end < "end"
)
SELECT step, label, start, globalTid
FROM (
    SELECT row_number() OVER (
               PARTITION BY globalTid >> 24 ORDER BY start, globalTid, "end" DESC, closed
           ) AS step,
           label, start, globalTid, closed
    FROM outer_ranges
)
WHERE NOT closed
ORDER BY step, globalTid
