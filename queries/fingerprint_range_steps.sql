-- fingerprint_range_steps: the CUDA API calls made inside some steps found from NVTX
-- ranges, each with its step, keyed as a launch finds its call: the calls of
-- steps_range_work.sql (the rule is the same: the latest-starting step range on the call's
-- thread that started at or before the call, if the call starts before it ends), without
-- its join with every GPU operation, DISTINCT and ORDER BY. tracelens.fingerprint.members
-- joins the kernel launches it has already read with these rows by the key (on the
-- 5M-kernel NVTX bench trace: 6.2 -> 2.9 CPU s for the step of every launch).
--
-- Needs the relation step_bounds: one row per step range (a step is one range per process),
-- step, globalTid (the range's thread), start and "end" (the range, ns from session start),
-- which the library registers.
--
-- Parameters:
--   $first   BIGINT    first step to select (inclusive)
--   $last    BIGINT    last step to select (inclusive)
--
-- Columns (unordered; one row per call):
--   launch   BIGINT  pid_of(globalTid) << 32 | correlationId: the key a GPU operation's
--                    (pid_of(globalPid) << 32 | correlationId) matches, as util_work
--   step     BIGINT  the step the call was made in
WITH steps AS (
    SELECT step::BIGINT AS step, globalTid::BIGINT AS globalTid, start::BIGINT AS start,
           "end"::BIGINT AS "end"
    FROM step_bounds
)
SELECT (pid_of(r.globalTid) << 32) | r.correlationId AS launch, s.step
FROM runtime_calls AS r
ASOF JOIN steps AS s ON s.globalTid = r.globalTid AND s.start <= r.start
WHERE r.start <= s."end" AND s.step BETWEEN $first AND $last
