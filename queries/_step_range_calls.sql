-- _step_range_calls: which step found from NVTX ranges each CUDA API call was made in, the
-- rule steps_range_work (the GPU work of some steps) and fingerprint_range_steps (the step
-- of every launch) share. Installed by the loader after _shared.sql.
--
-- Table macro step_range_calls(bounds, first, last): the calls made in steps `first` to
-- `last` (inclusive) of the relation named `bounds` (a table, a registered frame or a CTE
-- of the calling query, one row per step range, a step being one range per process: step,
-- globalTid (the range's thread), start and "end" (the range, ns from session start)). A call is in the latest-starting step range
-- on its thread that started at or before it (an ASOF join: with nested or overlapping
-- ranges, the inner one), if the call starts before that range ends, so it is in one step at
-- most. Only the calls from the first start to the last end of the selected steps' ranges
-- are joined (the same rows: no other call is in one of them; --step N of thousands of
-- steps, or the few steps a window meets, reads a few). Rows in no order.
--
-- Columns:
--   launch  BIGINT  pid_of(globalTid) << 32 | correlationId: the key a GPU operation's
--                   (pid_of(globalPid) << 32 | correlationId) matches, as util_work (one
--                   BIGINT key: a smaller hash table than the pair launched_by() matches)
--   step    BIGINT  the step the call was made in
CREATE OR REPLACE TEMP MACRO step_range_calls(bounds, first, last) AS TABLE
    WITH steps AS (
        SELECT step::BIGINT AS step, globalTid::BIGINT AS globalTid, start::BIGINT AS start,
               "end"::BIGINT AS "end"
        FROM query_table(bounds)
    ), span AS (
        SELECT min(start) AS lo, max("end") AS hi FROM steps WHERE step BETWEEN first AND last
    ), calls AS (
        -- only the calls within the selected steps' span can be in one of them
        SELECT r.globalTid, r.correlationId, r.start
        FROM runtime_calls AS r, span
        WHERE r.start BETWEEN span.lo AND span.hi
    )
    SELECT (pid_of(r.globalTid) << 32) | r.correlationId AS launch, s.step
    FROM calls AS r
    ASOF JOIN steps AS s ON s.globalTid = r.globalTid AND s.start <= r.start
    WHERE r.start <= s."end" AND s.step BETWEEN first AND last
