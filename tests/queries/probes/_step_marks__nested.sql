-- Probe of queries/_step_marks.sql: step_marks over made-up steps. Thread 1: step 1
-- [10, 100] holds step 2 [20, 50], which holds step 3 [30, 40]; step 4 [200, 300] after
-- them. Thread 2: step 5 [0, 10]. Expected per thread: each start (key t * 3) goes to its
-- step; after 3 ends (122) calls go to 2, after 2 ends (152) to 1, after 1 ends (302) to
-- none; after 4 ends (902) none; thread 2 after 5 ends (32) none.
WITH steps AS (
    SELECT * FROM (VALUES (1, 10, 100, 1), (2, 20, 50, 1), (3, 30, 40, 1), (4, 200, 300, 1),
                          (5, 0, 10, 2)) AS s(step, start, "end", globalTid)
)
SELECT globalTid, key, step FROM step_marks('steps') ORDER BY globalTid, key
