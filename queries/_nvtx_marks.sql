-- _nvtx_marks: per thread, the instants from which the innermost open NVTX range changes
-- (nvtx_tree): a range's start opens it, its end leaves its parent innermost. The sweep of
-- tracelens.nvtx_sweep finds each CUDA API call's last mark at or before the call's start
-- (a binary search per call, no range x call join). Run once per chunk of threads, those
-- in_thread_chunk($from_tid, $to_tid, $null_tid), so that one chunk's marks are held at
-- a time; ranges without a thread are left out (no call can be on their thread).
--
-- Keys order the marks of one instant: ends (t * 4), then starts (t * 4 + 1), then the ends
-- of empty ranges (t * 4 + 2); a call starting at t looks up t * 4 + 3, after all of them.
-- One mark per key, as the sweep that gave the depths ordered them (nvtx_sweep.depths):
-- of the starts at one instant the innermost is the deepest (the starts of an instant
-- have consecutive depths, longest first; of identical ranges the first is the parent);
-- of the ends, the range that started first is the outermost, and of identical ranges the
-- shallowest: from there its parent is innermost. (Keyed by start alone, identical ranges
-- left any of them innermost, and the GPU work of those above it was lost.)
--
-- Columns (ordered by global_tid, key):
--   global_tid  BIGINT  thread
--   key         BIGINT  instant * 4 + its place in the order above
--   open_id     BIGINT  from this mark on, the innermost open range (NULL: none)
--   open_end    BIGINT  that range's end, ns from session start
WITH tree AS (
    SELECT range_id, global_tid, start, "end", parent_id, depth
    FROM nvtx_tree
    WHERE global_tid IS NOT NULL AND in_thread_chunk(global_tid, $from_tid, $to_tid, $null_tid)
),
marks AS (
    SELECT global_tid, start * 4 + 1 AS key, arg_max(range_id, depth) AS open_id
    FROM tree
    GROUP BY global_tid, key
    UNION ALL
    SELECT global_tid, "end" * 4 + CASE WHEN "end" = start THEN 2 ELSE 0 END AS key,
           nullif(arg_min(coalesce(parent_id, -1), (start, depth)), -1) AS open_id
    FROM tree
    GROUP BY global_tid, key
)
SELECT m.global_tid, m.key, m.open_id, t."end" AS open_end
FROM marks AS m
LEFT JOIN tree AS t ON t.range_id = m.open_id
ORDER BY m.global_tid, m.key
