-- util_call_figures: what util reads of the CUDA runtime API calls when it has each GPU
-- operation's launching call already (a cache entry keeps the GPU work with the start of
-- that call: tracelens.util_workfile): the synchronizing calls, and the count and span of
-- every call (the analysis window reaches from the first call), without a row per call
-- (util_calls.sql's 5M rows on the 5M-kernel benchmark). One row per synchronizing call,
-- or one row with sync false (and NULL global_tid, start and end) when there is none.
-- Unordered.
--
-- Parameters:
--   $sync_regex  VARCHAR  CUDA API names (full match) that synchronize
--
-- Columns:
--   calls     BIGINT  every CUDA runtime API call (the same on each row)
--   first_ns  BIGINT  earliest call start, ns from session start (NULL without calls)
--   last_ns   BIGINT  latest call end, ns (NULL without calls)
--   sync      BOOLEAN true: the row is a synchronizing call (its name full-matches
--                     $sync_regex); false: the one row of a trace without one
--   global_tid BIGINT nsys globalTid of the synchronizing call's thread
--   start     BIGINT  its start, ns from session start
--   "end"     BIGINT  its end, ns
WITH every_call AS (
    SELECT count(*) AS calls, min(start) AS first_ns, max("end") AS last_ns
    FROM runtime_calls
),
sync_calls AS (
    SELECT true AS sync, r.globalTid AS global_tid, r.start, r."end"
    FROM runtime_calls AS r
    WHERE r.nameId IN (SELECT id FROM strings WHERE regexp_full_match(value, $sync_regex))
)
SELECT
    e.calls::BIGINT AS calls,
    e.first_ns::BIGINT AS first_ns,
    e.last_ns::BIGINT AS last_ns,
    coalesce(s.sync, false) AS sync,
    s.global_tid::BIGINT AS global_tid,
    s.start::BIGINT AS start,
    s."end"::BIGINT AS "end"
FROM every_call AS e
LEFT JOIN sync_calls AS s ON true
