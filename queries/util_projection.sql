-- util_projection: the GPU projection of the NVTX ranges an --nvtx selection matched, per
-- device: where util accounts busy and idle time over such a selection (the time between
-- the projections ran other work, or none, and is not the selection's idle time). As
-- nsys's nvtx_gpu_proj: a range's projection on a device reaches from the start of the
-- first GPU operation launched inside it (its CUDA API call lies wholly inside the range,
-- on the range's thread: nvtx_selected_work.sql's rule) to the end of the last. Nested or
-- overlapping matching ranges of one thread count as one (the projection of a nested range
-- lies inside its parent's; ranges that overlap without nesting are joined). Only the
-- operations that pass the event filter and are in $selection count. Needs
-- nvtx_matched_ranges() (Trace.load_nvtx_text). Unordered:
-- tracelens.util_project merges the intervals.
--
-- Parameters:
--   $label_re  VARCHAR  the --nvtx pattern as filters.glob_regex made it (full match on the
--                       range's label or its domain-qualified name)
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter (NULL: all)
--
-- Columns:
--   device    BIGINT  CUDA device ordinal
--   start_ns  BIGINT  start of the first operation launched in the ranges, ns from session
--                     start
--   end_ns    BIGINT  end of the last of them, ns
WITH reach AS (
    SELECT global_tid, start, reach_end,
           lag(reach_end) OVER (PARTITION BY global_tid ORDER BY start) AS before_end
    FROM nvtx_matched_ranges($label_re)
),
clusters AS (
    -- a cluster: ranges of one thread joined while each starts before the ones before
    -- it have all ended
    SELECT global_tid, start, reach_end,
           sum(CASE WHEN before_end IS NULL OR start > before_end THEN 1 ELSE 0 END)
               OVER (PARTITION BY global_tid ORDER BY start ROWS UNBOUNDED PRECEDING)
               AS cluster
    FROM reach
),
calls AS (
    SELECT r.globalTid - tid_of(r.globalTid) AS global_pid, r.correlationId, g.global_tid,
           g.cluster
    FROM runtime_calls AS r
    ASOF JOIN clusters AS g ON r.globalTid = g.global_tid AND r.start >= g.start
    WHERE r."end" <= g.reach_end
)
SELECT
    w.deviceId::BIGINT AS device,
    min(w.start)::BIGINT AS start_ns,
    max(w."end")::BIGINT AS end_ns
FROM gpu_work($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS w
JOIN calls AS c ON c.correlationId = w.correlationId AND c.global_pid = w.globalPid
GROUP BY w.deviceId, c.global_tid, c.cluster
