-- Probe of queries/_step_ranges.sql: outer_step_ranges over made-up matching ranges. Thread
-- 1: 'P#1' [10, 100] holds 'P#1' [11, 90] (same label: part of it) and 'P#1.x' [20, 30]
-- (another label: kept); 'P#2' [200, 300] and an exact copy of it (one kept); 'P#3'
-- [400, 500] and 'P#3' [450, 600] cross (not inside it: both kept). Thread 2: 'P#1' [50,
-- 60], inside thread 1's 'P#1' in time but on another thread: kept.
WITH matching AS (
    SELECT *, true AS closed
    FROM (VALUES (10, 100, 1, 'P#1'), (11, 90, 1, 'P#1'), (20, 30, 1, 'P#1.x'),
                 (200, 300, 1, 'P#2'), (200, 300, 1, 'P#2'), (400, 500, 1, 'P#3'),
                 (450, 600, 1, 'P#3'), (50, 60, 2, 'P#1'))
        AS r(start, "end", globalTid, label)
)
SELECT globalTid, start, "end" FROM outer_step_ranges('matching')
ORDER BY globalTid, start, "end"
