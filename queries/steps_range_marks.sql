-- steps_range_marks: where each step's calls begin and end on its thread, for attributing
-- API calls to steps found from NVTX ranges (tracelens.steps_ranges): a call goes to the
-- step of the latest mark of its thread at or before it (mark key <= call start * 3 + 1),
-- none when that mark's step is NULL. The same marks steps_by_range joins its calls to.
--
-- Needs the relation step_ranges: steps_range_list's rows (step, start, "end", globalTid),
-- which tracelens.steps_ranges registers (binding them as four list parameters cost 1.6
-- CPU s for 2,076 steps). No parameters.
--
-- Columns (by globalTid, key):
--   globalTid  BIGINT  the thread
--   key        BIGINT  the mark's time * 3 (a step's start) or * 3 + 2 (a step's end): at one
--                      instant steps start, then calls (* 3 + 1) are made, then steps end
--   step       BIGINT  the step a call made from this mark on goes to (NULL: none)
WITH RECURSIVE steps AS (
    SELECT step::BIGINT AS step, start::BIGINT AS start, "end"::BIGINT AS "end",
           globalTid::BIGINT AS globalTid
    FROM step_ranges
),
-- Matching ranges may nest (a glob that matches a range and one inside it): a call goes to
-- the latest-starting step of its thread that is open when the call starts. Each step's
-- enclosing step: the running count of open steps gives its depth, and the enclosing one
-- is the latest step one level up that started before it.
depths AS (
    SELECT step, start, "end", globalTid, sum(delta) OVER (
        PARTITION BY globalTid ORDER BY t, phase, tie, step ROWS UNBOUNDED PRECEDING) - 1 AS depth
    FROM (
        SELECT step, start, "end", globalTid, start AS t, 1 AS phase, -"end" AS tie, 1 AS delta
        FROM steps
        UNION ALL
        SELECT step, start, "end", globalTid, "end", 0, 0, -1
        FROM steps
    )
    QUALIFY delta = 1
),
nested AS (
    SELECT c.step, c.start, c."end", c.globalTid, p.step AS parent
    FROM depths AS c
    ASOF LEFT JOIN depths AS p
      ON p.globalTid = c.globalTid AND p.depth = c.depth - 1 AND p.step < c.step
),
-- every enclosing step of each step (steps are few: recursions over them, never over the
-- calls), with its end; nested steps' ends grow outwards
ancestors AS (
    SELECT step AS of_step, parent AS step FROM nested WHERE parent IS NOT NULL
    UNION ALL
    SELECT a.of_step, n.parent
    FROM ancestors AS a
    JOIN nested AS n ON n.step = a.step
    WHERE n.parent IS NOT NULL
),
enclosing AS (
    SELECT a.of_step, a.step, n."end" FROM ancestors AS a JOIN nested AS n USING (step)
),
-- the step a call goes to right after each step ends: the latest step that started by then,
-- if still open, else the first of its enclosing steps to end later
after_end AS (
    SELECT k.globalTid, k."end",
           CASE WHEN g."end" > k."end" THEN g.step ELSE e.step END AS step
    FROM nested AS k
    ASOF JOIN nested AS g ON g.globalTid = k.globalTid AND g.start <= k."end"
    ASOF LEFT JOIN enclosing AS e ON e.of_step = g.step AND e."end" > k."end"
),
-- from each mark on, the step a call starting then goes to; at one instant: steps starting
-- (key t * 3), then calls (t * 3 + 1: a call at a step's start or end is in it), then ends
marks AS (
    SELECT globalTid, key, arg_max(step, rank) AS step
    FROM (
        SELECT globalTid, start * 3 AS key, step, step AS rank FROM nested
        UNION ALL
        SELECT globalTid, "end" * 3 + 2, step, 0 FROM after_end
    )
    GROUP BY globalTid, key
)
SELECT globalTid, key, step FROM marks ORDER BY globalTid, key
