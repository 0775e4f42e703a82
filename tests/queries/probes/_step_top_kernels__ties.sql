-- Probe of queries/_step_top_kernels.sql: step_top_kernels over a made-up per-kernel relation
-- of the trace's three kernel names (n = 1, 2, 3 in name_id order). Step 1 on device 0: a
-- tie at 300 ns (the lower name_id ranks first) and a third kernel past $top = 2 whose
-- 100 ns still count in the step's time (300 / 700 = 42.9%); step 1 on device 1 and step 2:
-- one kernel each (100%).
WITH names AS (
    SELECT row_number() OVER (ORDER BY demangledName) AS n, demangledName AS name_id
    FROM (SELECT DISTINCT demangledName FROM kernels)
),
per_kernel AS (
    SELECT p.step, p.device, names.name_id, p.calls, p.total_ns
    FROM (VALUES (1, 0, 2, 1, 300), (1, 0, 1, 2, 300), (1, 0, 3, 4, 100), (1, 1, 3, 1, 30),
                 (2, 0, 3, 1, 7)) AS p(step, device, n, calls, total_ns)
    JOIN names ON names.n = p.n
)
SELECT * FROM step_top_kernels('per_kernel', $top)
ORDER BY step, device, rank
