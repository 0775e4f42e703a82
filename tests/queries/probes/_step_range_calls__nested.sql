-- Probe of queries/_step_range_calls.sql: step_range_calls over made-up steps on the
-- fixture's thread, whose calls start at t+10, t+20, t+320, t+330 and t+800 (t = 1,000,000
-- ns). Steps: 1 [t, t+100]; 2 [t+300, t+400], holding 3 [t+325, t+390]; 4 [t+790, t+795].
-- Expected over steps 1 to 3: the calls at t+10 and t+20 in step 1, t+320 in step 2, t+330
-- in step 3 (the inner range), t+800 in none (step 4 ended before it, and is not in 1 to 3).
WITH steps AS (
    SELECT s.step, c.globalTid, 1000000 + s.lo AS start, 1000000 + s.hi AS "end"
    FROM (VALUES (1, 0, 100), (2, 300, 400), (3, 325, 390), (4, 790, 795)) AS s(step, lo, hi),
         (SELECT DISTINCT globalTid FROM runtime_calls) AS c
)
SELECT r.start - 1000000 AS call_start, c.step
FROM step_range_calls('steps', 1, 3) AS c
JOIN runtime_calls AS r ON ((pid_of(r.globalTid) << 32) | r.correlationId) = c.launch
ORDER BY call_start
