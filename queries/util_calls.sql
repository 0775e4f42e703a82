-- util_calls: every CUDA runtime API call, with what util reads of it, in one read of the
-- API calls (on a 5M-kernel export each read of them costs about a census): the call that
-- launched the GPU operation ending an idle gap (launched_by in _shared.sql: the
-- process and correlation id; tracelens.util_calls indexes the calls by them) and its
-- thread, whether that thread was blocked in a synchronizing call (sync), and the span of
-- the calls (the
-- analysis window reaches from the first call; util_window.sql with $api false leaves
-- them to this read). Unordered.
--
-- Parameters:
--   $sync_regex  VARCHAR  CUDA API names (full match) that synchronize
--
-- Columns:
--   global_tid      BIGINT   nsys globalTid of the calling thread (its process: pid_of;
--                            one column for both: tracelens.util_calls takes the pid)
--   correlation_id  BIGINT   CUPTI correlation id (NULL when the export has none)
--   start           BIGINT   call start, ns from session start
--   "end"           BIGINT   call end, ns from session start
--   sync            BOOLEAN  the name full-matches $sync_regex: the call blocks its thread
--                            until GPU work is done
SELECT
    r.globalTid::BIGINT AS global_tid,
    r.correlationId::BIGINT AS correlation_id,
    r.start::BIGINT AS start,
    r."end"::BIGINT AS "end",
    r.nameId IN (SELECT id FROM strings WHERE regexp_full_match(value, $sync_regex)) AS sync
FROM runtime_calls AS r
