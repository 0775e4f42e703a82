-- _nvtx_tree: the rows of the temp table nvtx_tree, the nesting of the NVTX ranges nsys
-- projects onto the GPU (nvtx_spans: nvtx_ranges() that end on the thread that opened them),
-- as nsys stats 2022.4's nvtx_gpu_proj_trace builds it: a range's parent is the tightest
-- range on its thread that contains it. tracelens.nvtx runs it once per chunk of threads,
-- so that its joins hold one chunk's ranges, not ten million: it reads that chunk's ranges
-- with their depths from nvtx_depths (tracelens.nvtx_sweep.depths registers it, from
-- _nvtx_chunk_spans).
-- Names, styles, stacks and paths are not here: _nvtx_paths gives them to the ranges that
-- hold GPU work (a trace's ranges may be ten million; those that launched work are fewer).
--
-- Without a range x range join: per thread, a running count over the start and end events
-- (in polars: ends first at one instant, then starts longest first, then the ends of
-- empty ranges) gives each range its depth among the open ranges, and the parent is the
-- latest-starting range one level up (an ASOF join on thread and depth). That is exact for properly nested
-- ranges (every push/pop range), and there the level is the depth. A candidate that does
-- not contain the range (start/end ranges that overlap on one thread) is replaced by the
-- tightest container found by a join of just those ranges with their thread's ranges (of
-- two identical ranges, the first is the parent, as in the depths: so of several identical
-- containers the last is the tightest); on the threads where that happened, so
-- is every range that started inside two or more open ranges (it may lie in two that
-- overlap, and nsys takes the tighter), and the level follows the parent links from the
-- roots down (one step per level).
--
-- Columns of nvtx_tree (tracelens.nvtx creates it with these types; the query's own are
-- wider): range ids are UINTEGER when every RangeId of the trace fits (else BIGINT), so
-- readers that hand them on cast them to BIGINT.
--   range_id    UINTEGER   nsys's RangeId (NVTX_EVENTS rowid)
--   global_tid  BIGINT     thread
--   start, "end" BIGINT    range start and end, ns from session start (open: last NVTX ts)
--   parent_id   UINTEGER   RangeId of the enclosing range, NULL at the top
--   level       INTEGER    nesting level, 0 at the top
--   depth       INTEGER    ranges open on the thread when it started (= level when nested)
WITH RECURSIVE
ranges AS (
    SELECT range_id, global_tid, start, "end" FROM nvtx_depths
),
depths AS (
    SELECT range_id, global_tid, start, "end", depth FROM nvtx_depths
),
checked AS MATERIALIZED (
    SELECT c.range_id, c.global_tid, c.start, c."end", c.depth, p.range_id AS parent_id,
           p.range_id IS NULL AND c.depth > 0
           OR p.range_id IS NOT NULL AND NOT (p.start <= c.start AND p."end" >= c."end")
               AS misfit
    FROM depths AS c
    ASOF LEFT JOIN depths AS p
      ON p.global_tid = c.global_tid AND p.depth = c.depth - 1 AND p.start <= c.start
),
-- the threads where a candidate did not contain its range: their ranges overlap
refitted AS (
    SELECT DISTINCT global_tid FROM checked WHERE misfit
),
unfit AS MATERIALIZED (
    -- the misfits, and on those threads every range that started inside two or more open
    -- ranges: the candidate may contain it without being the tightest range that does
    -- (nsys's parent). Usually none: the join below then has nothing to compare.
    SELECT range_id, global_tid, start, "end"
    FROM checked
    WHERE misfit OR depth >= 2 AND global_tid IN (SELECT global_tid FROM refitted)
),
containers AS (
    SELECT m.range_id, p.range_id AS parent_id,
           (m.start - p.start) + (p."end" - m."end") AS slack,
           -- identical containers are one candidate, placed by its first range; of them
           -- the last is taken (the innermost: the first of two identical is the parent)
           min(p.range_id) OVER (PARTITION BY m.range_id, p.start, p."end") AS first_id
    FROM unfit AS m
    JOIN ranges AS p
      ON p.global_tid = m.global_tid AND p.start <= m.start AND p."end" >= m."end"
     AND (p.start < m.start OR p."end" > m."end" OR p.range_id < m.range_id)
),
refit AS (
    SELECT range_id, parent_id
    FROM containers
    QUALIFY row_number() OVER (
        PARTITION BY range_id ORDER BY slack, first_id, parent_id DESC
    ) = 1
),
parents AS MATERIALIZED (
    SELECT c.range_id, c.global_tid, c.start, c."end", c.depth,
           CASE WHEN c.misfit OR f.range_id IS NOT NULL THEN f.parent_id ELSE c.parent_id END
               AS parent_id
    FROM checked AS c
    LEFT JOIN refit AS f ON f.range_id = c.range_id
),
levels AS (
    SELECT p.range_id, 0::BIGINT AS level
    FROM parents AS p
    WHERE p.parent_id IS NULL AND p.global_tid IN (SELECT global_tid FROM refitted)
    UNION ALL
    SELECT p.range_id, l.level + 1
    FROM levels AS l
    JOIN parents AS p ON p.parent_id = l.range_id
)
SELECT p.range_id, p.global_tid, p.start, p."end", p.parent_id,
       coalesce(l.level, p.depth) AS level, p.depth
FROM parents AS p
LEFT JOIN levels AS l ON l.range_id = p.range_id
