-- _step_marks: where the calls of steps found from NVTX ranges go, for steps_range_marks (over
-- the steps tracelens.steps_ranges registers) and steps_by_range (over its own, listed by
-- step_ranges of _step_ranges.sql). Installed by the loader after _shared.sql.
--
-- Table macro step_marks(steps): for the relation named `steps` (a table or a CTE of the
-- calling query: step, start, "end" (ns), globalTid; ranges of a thread may nest), per
-- thread the marks where the step of a call changes: a call goes to the step of the latest
-- mark of its thread at or before it (mark key <= call start * 3 + 1), none when that
-- mark's step is NULL. Rows in no order.
--
-- Columns:
--   globalTid  BIGINT  the thread
--   key        BIGINT  the mark's time * 3 (a step's start) or * 3 + 2 (a step's end): at one
--                      instant steps start, then calls (* 3 + 1) are made, then steps end
--   step       BIGINT  the step a call made from this mark on goes to (NULL: none)
CREATE OR REPLACE TEMP MACRO step_marks(steps) AS TABLE
    -- Matching ranges may nest (a glob that matches a range and one inside it): a call goes to
    -- the latest-starting step of its thread that is open when the call starts. Each step's
    -- enclosing step: the running count of open steps gives its depth, and the enclosing one
    -- is the latest step one level up that started before it.
    WITH RECURSIVE depths AS (
        SELECT step, start, "end", globalTid,
               sum(delta) OVER (PARTITION BY globalTid ORDER BY t, phase, tie, step
                                ROWS UNBOUNDED PRECEDING) - 1 AS depth
        FROM (
            SELECT step, start, "end", globalTid, start AS t, 1 AS phase, -"end" AS tie, 1 AS delta
            FROM query_table(steps)
            UNION ALL
            SELECT step, start, "end", globalTid, "end", 0, 0, -1
            FROM query_table(steps)
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
    SELECT globalTid, key, step FROM marks;
