-- _nvtx_call_ranges: the rows of the temp table nvtx_call_ranges: each CUDA API call
-- (nvtx_calls) with the innermost projected NVTX range (nvtx_tree) that holds it, the
-- tightest range on the call's thread that contains the whole call, nsys's rule.
-- tracelens.nvtx runs it once per chunk of threads, those in_thread_chunk($from_tid,
-- $to_tid, $null_tid) (the chunks of the tree, widened to cover every thread), so that
-- the marks and the ASOF join hold one chunk's ranges, not ten million.
--
-- A sweep, not an interval join: per thread, the range starts and ends sorted into "marks"
-- (from a start on, that range is the innermost open one; from an end on, its parent), and
-- each call ASOF-joined to the last mark at or before its start. A candidate that ends
-- before the call does (a call straddling a range's end, which push/pop ranges on one
-- thread cannot do), or no candidate on a thread whose ranges overlap, is replaced by the
-- tightest container found by a join of just those calls.
--
-- Columns:
--   global_pid      BIGINT  the calling process
--   correlation_id  BIGINT  its correlationId
--   global_tid      BIGINT  the calling thread
--   range_id        BIGINT  innermost range holding the call (NULL: none)
WITH calls AS (
    SELECT * FROM nvtx_calls
    WHERE in_thread_chunk(global_tid, $from_tid, $to_tid, $null_tid)
),
tree AS (
    SELECT * FROM nvtx_tree
    WHERE in_thread_chunk(global_tid, $from_tid, $to_tid, $null_tid)
),
marks AS (
    -- From each instant on, the innermost open range: a range from its start, its parent from
    -- its end (the ranges of one thread nest). One mark per instant: the last in the order
    -- of nvtx_tree's sweep (ends, then starts longest first, then empty ranges' ends).
    SELECT global_tid, key, nullif(arg_max(coalesce(open_id, -1), tie), -1) AS open_id
    FROM (
        SELECT global_tid, start * 4 + 1 AS key, -"end" AS tie, range_id AS open_id
        FROM tree
        UNION ALL
        SELECT global_tid, "end" * 4 + CASE WHEN "end" = start THEN 2 ELSE 0 END, -start,
               parent_id
        FROM tree
    )
    GROUP BY global_tid, key
),
candidates AS MATERIALIZED (
    -- calls on threads without ranges keep their thread and no range (ASOF LEFT)
    SELECT c.global_tid, c.start, c."end", c.global_pid, c.correlation_id,
           p.range_id, p."end" AS range_end
    FROM calls AS c
    ASOF LEFT JOIN marks AS m ON m.global_tid = c.global_tid AND m.key <= c.start * 4 + 3
    LEFT JOIN tree AS p ON p.range_id = m.open_id
),
-- threads whose ranges do not all nest (start/end ranges that overlap): there a call with
-- no candidate may still lie in a range
overlapping AS (
    SELECT DISTINCT global_tid FROM tree WHERE level <> depth
),
refit AS (
    SELECT c.global_pid, c.correlation_id, p.range_id
    FROM candidates AS c
    JOIN tree AS p
      ON p.global_tid = c.global_tid AND p.start <= c.start AND p."end" >= c."end"
    WHERE c.range_end < c."end"
       OR c.range_id IS NULL AND c.global_tid IN (SELECT global_tid FROM overlapping)
    QUALIFY row_number() OVER (
        PARTITION BY c.global_pid, c.correlation_id
        ORDER BY (c.start - p.start) + (p."end" - c."end"), p.range_id) = 1
),
held AS (
    -- a candidate that holds the whole call, else the refit (usually none: an empty join)
    SELECT c.global_pid, c.correlation_id, c.global_tid,
           CASE WHEN c.range_end >= c."end" THEN c.range_id ELSE f.range_id END AS range_id
    FROM candidates AS c
    LEFT JOIN refit AS f ON f.global_pid = c.global_pid AND f.correlation_id = c.correlation_id
)
SELECT global_pid, correlation_id, global_tid, range_id FROM held
