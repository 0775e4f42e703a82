-- _nvtx_tree: creates the temp table nvtx_tree, the nesting of the NVTX ranges nsys projects
-- onto the GPU (nvtx_ranges() that end on the thread that opened them), as nsys stats
-- 2022.4's nvtx_gpu_proj_trace builds it: a range's parent is the tightest range on its
-- thread that contains it. Run once per trace by tracelens.nvtx (Trace.load_nvtx_text first).
--
-- Without a range x range join: per thread, a running count over the start and end events
-- gives each range its depth among the open ranges, and the parent is the latest-starting
-- range one level up (an ASOF join on thread and depth). That is exact for properly nested
-- ranges (every push/pop range); a candidate that does not contain the range (start/end
-- ranges that overlap on one thread) is replaced by the tightest container found by a
-- join of just those ranges (of two identical ranges, the first is the parent). Level,
-- stack and path then follow the parent links from the roots down (one step per level;
-- the CTEs the recursion reads are MATERIALIZED, so that no step recomputes them).
--
-- Columns of nvtx_tree:
--   range_id    BIGINT     nsys's RangeId (NVTX_EVENTS rowid)
--   global_tid  BIGINT     thread
--   start, "end" BIGINT    range start and end, ns from session start (open: last NVTX ts)
--   style       VARCHAR    'PushPop' | 'StartEnd'
--   name        VARCHAR    nsys's range name
--   parent_id   BIGINT     RangeId of the enclosing range, NULL at the top
--   level       BIGINT     nesting level, 0 at the top
--   depth       BIGINT     ranges open on the thread when it started (= level when nested)
--   stack       VARCHAR    ':1:3:4', the RangeIds from the top down (nsys's RangeStack)
--   path        VARCHAR    the range names from the top down, joined by ' / '
CREATE OR REPLACE TEMP TABLE nvtx_tree AS
WITH RECURSIVE
ranges AS MATERIALIZED (
    SELECT range_id, global_tid, start, "end", style, name
    FROM nvtx_ranges()
    WHERE same_thread
),
events AS (
    -- at one instant: ends first, then starts (longest first), then the ends of empty ranges
    SELECT global_tid, start AS t, 1 AS phase, -"end" AS tie, range_id, 1 AS delta FROM ranges
    UNION ALL
    SELECT global_tid, "end", CASE WHEN "end" = start THEN 2 ELSE 0 END, -start, range_id, -1
    FROM ranges
),
depths AS MATERIALIZED (
    -- a running sum up to this row, less this row (DuckDB streams that frame)
    SELECT range_id, global_tid, t AS start, sum(delta) OVER (
        PARTITION BY global_tid ORDER BY t, phase, tie, range_id
        ROWS UNBOUNDED PRECEDING) - delta AS depth
    FROM events
    QUALIFY delta = 1
),
candidates AS (
    SELECT c.range_id, p.range_id AS parent_id
    FROM depths AS c
    ASOF LEFT JOIN depths AS p
      ON p.global_tid = c.global_tid AND p.depth = c.depth - 1 AND p.start <= c.start
),
checked AS (
    SELECT k.range_id, k.parent_id,
           k.parent_id IS NULL AND d.depth > 0
           OR k.parent_id IS NOT NULL AND NOT (p.start <= r.start AND p."end" >= r."end")
               AS misfit
    FROM candidates AS k
    JOIN ranges AS r ON r.range_id = k.range_id
    JOIN depths AS d ON d.range_id = k.range_id
    LEFT JOIN ranges AS p ON p.range_id = k.parent_id
),
refit AS (
    SELECT m.range_id, p.range_id AS parent_id
    FROM checked AS m
    JOIN ranges AS r ON r.range_id = m.range_id
    JOIN ranges AS p
      ON p.global_tid = r.global_tid AND p.start <= r.start AND p."end" >= r."end"
     AND (p.start < r.start OR p."end" > r."end" OR p.range_id < r.range_id)
    WHERE m.misfit
    QUALIFY row_number() OVER (
        PARTITION BY m.range_id ORDER BY (r.start - p.start) + (p."end" - r."end"), p.range_id
    ) = 1
),
parents AS MATERIALIZED (
    SELECT c.range_id, CASE WHEN c.misfit THEN f.parent_id ELSE c.parent_id END AS parent_id
    FROM checked AS c
    LEFT JOIN refit AS f ON f.range_id = c.range_id
),
tree AS (
    SELECT p.range_id, 0::BIGINT AS level, ':' || p.range_id AS stack, r.name AS path
    FROM parents AS p JOIN ranges AS r ON r.range_id = p.range_id
    WHERE p.parent_id IS NULL
    UNION ALL
    SELECT p.range_id, t.level + 1, t.stack || ':' || p.range_id,
           t.path || ' / ' || coalesce(r.name, '')
    FROM tree AS t
    JOIN parents AS p ON p.parent_id = t.range_id
    JOIN ranges AS r ON r.range_id = p.range_id
)
SELECT r.range_id, r.global_tid, r.start, r."end", r.style, r.name, p.parent_id,
       t.level, d.depth, t.stack, t.path
FROM ranges AS r
JOIN parents AS p ON p.range_id = r.range_id
JOIN depths AS d ON d.range_id = r.range_id
JOIN tree AS t ON t.range_id = r.range_id
