-- fingerprint_open_range_paths: the CUDA API calls the ranges left open at the end of the
-- capture hold for the fingerprint but not for the nvtx command, each with its own path:
-- the open ranges that hold it, outermost first. nsys ends an open range at the last NVTX
-- event (nvtx_ranges()'s "end"), so a capture cut inside a long range ('generate', its
-- inner steps not annotated) has its last launches, those made after the last NVTX event,
-- in no range, while the full capture holds them in that range: the fingerprint's path of
-- the same work would differ by where the capture was cut. Here a call that ends after
-- that end (so inside no range of the sweep or of fingerprint_nvtx_overlaps) and starts
-- inside an open range of its thread is held by every open range of its thread that
-- started at or before it: push/pop or start/end, in any domain, on a thread whose ranges
-- nest or not (a start/end range crossing another). Only open ranges: a closed range ends
-- by the last NVTX event, before the call ends, so it does not hold the call (a closed
-- start/end range that enclosed the open one up to the last NVTX event is no part of the
-- path). Ranges that start together nest in range id order (_nvtx_tree's rule: of two
-- identical ranges the first is the parent). No parameters.
--
-- Inputs: nvtx_tree (the ranges nsys projects, on every thread: an open range ends on no
-- other thread), nvtx_ranges() over nvtx_text, runtime_calls, and the temp table
-- fp_overlap_paths (fingerprint_nvtx_overlaps), whose negative path ids these follow.
--
-- Columns:
--   path_id         BIGINT  the path's id: one per innermost open range, negative, below
--                           fp_overlap_paths' ids (fp_path_lists.path_id)
--   global_pid      BIGINT  the calling process (globalTid with the thread bits cleared: a
--                           kernel's globalPid)
--   correlation_id  BIGINT  correlation id shared by the call and the kernels it launched
--   ranges          STRUCT(label VARCHAR, start BIGINT, "end" BIGINT)[]
--                           the open ranges holding the call, outermost first: label
--                           (nvtx_ranges().name, normalized by torch_label as in
--                           fingerprint_range_paths), start and end (the last NVTX event)
--                           in ns from session start
WITH open_ranges AS MATERIALIZED (
    SELECT t.range_id::BIGINT AS range_id, t.global_tid, t.start, t."end",
           {'label': torch_label(coalesce(r.name, '')), 'start': t.start, 'end': t."end"} AS own
    FROM nvtx_tree AS t
    JOIN nvtx_ranges() AS r ON r.range_id = t.range_id
    WHERE NOT r.closed
),
late_calls AS (
    SELECT c.globalTid AS global_tid, c.correlationId AS correlation_id, c.start, c."end"
    FROM runtime_calls AS c
    WHERE c.globalTid IN (SELECT global_tid FROM open_ranges)
      AND c."end" > (SELECT min("end") FROM open_ranges)
),
held AS (
    SELECT (c.global_tid - tid_of(c.global_tid))::BIGINT AS global_pid,
           c.correlation_id::BIGINT AS correlation_id,
           arg_max(o.range_id, (o.start, o.range_id)) AS innermost,
           list(o.own ORDER BY o.start, o.range_id) AS ranges
    FROM late_calls AS c
    JOIN open_ranges AS o
      ON o.global_tid = c.global_tid AND o.start <= c.start AND c."end" > o."end"
    GROUP BY ALL
)
SELECT -((SELECT coalesce(-min(path_id), 0) FROM fp_overlap_paths)
         + dense_rank() OVER (ORDER BY innermost))::BIGINT AS path_id,
       global_pid, correlation_id, ranges
FROM held
