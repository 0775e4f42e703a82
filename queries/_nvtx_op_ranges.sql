-- _nvtx_op_ranges: creates the temp table nvtx_op_ranges: every GPU operation (kernel,
-- memcpy, memset, CUDA graph replay traced at graph level) with the innermost projected
-- NVTX range (nvtx_tree) that holds the CUDA API call which launched it: the tightest range
-- on the call's thread that contains the whole call, nsys's rule. The ranges holding an
-- operation are that range and its ancestors (nvtx_tree.stack). Needs nvtx_tree.
--
-- A sweep, not an interval join: per thread, the calls are merged into the sorted start and
-- end events of the ranges; the running count of open ranges at a call is its depth D, and
-- the innermost candidate is the latest-starting range at depth D - 1 (an ASOF join on
-- thread and depth). A candidate that ends before the call does (the call straddles a
-- range's end, which push/pop ranges on one thread cannot do) is replaced by the tightest
-- container found by a join of just those calls.
-- An operation launched by two API rows (runtime and driver record of one correlationId)
-- takes the first (runtime before driver, then the earlier).
--
-- Columns of nvtx_op_ranges:
--   kind           VARCHAR  'kernel', 'memcpy', 'memset' or 'graph'
--   globalPid      BIGINT   the operation's globalPid
--   correlationId  BIGINT   its correlationId
--   device         BIGINT   CUDA device
--   start, "end"   BIGINT   when it ran on the GPU, ns from session start
--   name_id        BIGINT   kernels: demangledName (StringIds), else NULL
--   short_id       BIGINT   kernels: shortName, else NULL
--   global_tid     BIGINT   the thread of the launching call (NULL: no call recorded)
--   range_id       BIGINT   innermost range holding the call (NULL: none)
CREATE OR REPLACE TEMP TABLE nvtx_op_ranges AS
WITH ops AS (
    SELECT * FROM gpu_operations()
),
calls AS (
    SELECT r.globalTid AS global_tid, r.start, r."end", r.correlationId,
           r.globalTid - tid_of(r.globalTid) AS global_pid
    FROM runtime_calls AS r
    WHERE (r.globalTid - tid_of(r.globalTid), r.correlationId) IN (
          SELECT (globalPid, correlationId) FROM ops)
    QUALIFY row_number() OVER (
        PARTITION BY global_pid, r.correlationId ORDER BY r.eventClass, r.start) = 1
),
events AS (
    -- at one instant: range ends, range starts, ends of empty ranges, then calls
    SELECT global_tid, start AS t, 1 AS phase, -"end" AS tie, 1 AS delta, NULL AS call_end,
           NULL::BIGINT AS global_pid, NULL::BIGINT AS correlation_id
    FROM nvtx_tree
    UNION ALL
    SELECT global_tid, "end", CASE WHEN "end" = start THEN 2 ELSE 0 END, -start, -1, NULL,
           NULL, NULL
    FROM nvtx_tree
    UNION ALL
    SELECT global_tid, start, 3, 0, 0, "end", global_pid, correlationId FROM calls
    WHERE global_tid IN (SELECT DISTINCT global_tid FROM nvtx_tree)
),
call_depths AS (
    SELECT global_tid, t AS start, call_end AS "end", global_pid, correlation_id,
           sum(delta) OVER (
               PARTITION BY global_tid ORDER BY t, phase, tie
               ROWS UNBOUNDED PRECEDING) AS depth
    FROM events
    QUALIFY phase = 3
),
candidates AS (
    SELECT c.*, p.range_id, p."end" AS range_end
    FROM call_depths AS c
    ASOF LEFT JOIN nvtx_tree AS p
      ON p.global_tid = c.global_tid AND p.depth = c.depth - 1 AND p.start <= c.start
    WHERE c.depth > 0
),
refit AS (
    SELECT c.global_pid, c.correlation_id, p.range_id
    FROM candidates AS c
    JOIN nvtx_tree AS p
      ON p.global_tid = c.global_tid AND p.start <= c.start AND p."end" >= c."end"
    WHERE c.range_id IS NULL OR c.range_end < c."end"
    QUALIFY row_number() OVER (
        PARTITION BY c.global_pid, c.correlation_id
        ORDER BY (c.start - p.start) + (p."end" - c."end"), p.range_id) = 1
),
held AS (
    SELECT global_pid, correlation_id, range_id FROM candidates
    WHERE range_id IS NOT NULL AND range_end >= "end"
    UNION ALL
    SELECT global_pid, correlation_id, range_id FROM refit
)
SELECT o.kind, o.globalPid, o.correlationId, o.device, o.start, o."end", o.name_id,
       o.short_id, c.global_tid, h.range_id
FROM ops AS o
LEFT JOIN calls AS c ON c.global_pid = o.globalPid AND c.correlationId = o.correlationId
LEFT JOIN held AS h ON h.global_pid = o.globalPid AND h.correlation_id = o.correlationId
