-- steps_range_open: the NVTX ranges that would be steps (as steps_range_list lists them)
-- but were left open at the end of the capture (end NULL: the capture stopped inside
-- them), with the step number each would have. steps_range_list leaves them out: cut by
-- the capture's end, such a range is no complete step, so tracelens.steps leaves it out of
-- the steps and says so. The same rule lists them (step_ranges of _step_ranges.sql, with
-- open := true): an open range lasts until the latest timestamp of any NVTX event (nsys's
-- nvtx reports time it so) for what it encloses; a matching range inside an earlier one
-- of its thread with the same label is part of that one.
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
--   step       BIGINT   the 1-based step number the range would have in its thread
--                        (steps_range_list's numbering, counting it)
--   label      VARCHAR  the range's label (its text, else its registered string)
--   start      BIGINT   range start, ns from session start
--   globalTid  BIGINT   the range's thread
WITH open_processes AS (
    SELECT DISTINCT globalTid >> 24 AS process
    FROM nvtx_text
    WHERE "end" IS NULL AND is_nvtx_range_type(eventType) AND globalTid IS NOT NULL
),
-- the NVTX events of those processes (a range's enclosing ranges are of its own thread)
open_source AS (
    SELECT * FROM nvtx_text WHERE globalTid >> 24 IN (SELECT process FROM open_processes)
)
SELECT step, label, start, globalTid
FROM step_ranges($pattern, $match, $top_level, source := 'open_source', open := true)
WHERE NOT closed
ORDER BY step, globalTid
