-- nvtx_selected_work: the GPU operations launched inside the NVTX ranges whose name matches
-- a pattern, the set --nvtx restricts an analysis to. As nsys's GPU projection: an
-- operation belongs to a range when the CUDA API call that launched it (same process and
-- correlationId) lies wholly inside the range on the range's thread; union over the
-- matching ranges. Kernels, memcpys, memsets and CUDA graph replays traced at graph level
-- (a cudaGraphLaunch inside a range selects the graph's work either way).
-- Needs nvtx_matched_ranges() (Trace.load_nvtx_text): one sorted pass per
-- thread, never a range x call join (a call [s, e] is inside some range exactly when the
-- reach of the last range starting at or before s is >= e: an ASOF join).
--
-- Parameters:
--   $label_re  VARCHAR  an RE2 regex matched in full against the range's label and its
--                       domain-qualified name: filters.glob_regex of the --nvtx glob (RE2
--                       is linear in the label; DuckDB's GLOB backtracks on many *)
-- Columns (ordered by both):
--   globalPid      BIGINT  the GPU operation's globalPid
--   correlationId  BIGINT  its correlationId
WITH calls AS (
    SELECT r.globalTid - tid_of(r.globalTid) AS global_pid, r.correlationId
    FROM runtime_calls AS r
    ASOF JOIN nvtx_matched_ranges($label_re) AS g
        ON r.globalTid = g.global_tid AND r.start >= g.start
    WHERE r."end" <= g.reach_end
),
gpu AS (
    SELECT globalPid, correlationId FROM gpu_operations()
)
SELECT DISTINCT gpu.globalPid, gpu.correlationId
FROM gpu
JOIN calls ON calls.correlationId = gpu.correlationId AND calls.global_pid = gpu.globalPid
ORDER BY gpu.globalPid, gpu.correlationId
