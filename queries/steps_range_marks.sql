-- steps_range_marks: where each step range's calls begin and end on its thread, for
-- attributing API calls to steps found from NVTX ranges (tracelens.steps_ranges): a call
-- goes to the range of the latest mark of its thread at or before it (mark key <= call
-- start * 3 + 1), none when that mark's range is NULL: step_marks (queries/_step_marks.sql,
-- over the ranges: a step number is one range per process), the marks steps_by_range
-- joins its calls to.
--
-- Needs the relation step_ranges: steps_range_list's rows (range, start, "end", globalTid),
-- which tracelens.steps_ranges registers (binding them as four list parameters cost 1.6
-- CPU s for 2,076 steps). No parameters.
--
-- Columns (by globalTid, key):
--   globalTid  BIGINT  the thread
--   key        BIGINT  the mark's time * 3 (a step's start) or * 3 + 2 (a step's end): at one
--                      instant steps start, then calls (* 3 + 1) are made, then steps end
--   range      BIGINT  the step range (steps_range_list.range) a call made from this mark on
--                      goes to (NULL: none)
WITH steps AS (
    SELECT range::BIGINT AS step, start::BIGINT AS start, "end"::BIGINT AS "end",
           globalTid::BIGINT AS globalTid
    FROM step_ranges
)
SELECT globalTid, key, step AS range FROM step_marks('steps') ORDER BY globalTid, key
