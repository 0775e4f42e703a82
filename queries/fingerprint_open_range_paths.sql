-- fingerprint_open_range_paths: the CUDA API calls a range left open at the end of the
-- capture holds for the fingerprint but not for the nvtx command, with that range's id as
-- their path (fp_path_lists.path_id). nsys ends an open range at the last NVTX event
-- (nvtx_tree's "end"), so a capture cut inside a long range ('generate', its inner steps
-- not annotated) has its last launches, those made after the last NVTX event, in no
-- range, while the full capture holds them in that range: the fingerprint's path of the
-- same work would differ by where the capture was cut. Here a call on a thread with open
-- ranges that ends after their end (so in no range of the sweep) and starts inside one
-- takes the innermost open range that started at or before it (the latest start; of two
-- that start together, the later pushed: _nvtx_tree's rule). The other calls keep the
-- sweep's range (fingerprint_nvtx_paths). Threads whose ranges do not nest
-- (fp_overlap_threads) are left to fingerprint_nvtx_overlaps. No parameters.
--
-- Inputs: nvtx_tree, nvtx_text (an open range's "end" is NULL there), runtime_calls and
-- the temp table fp_overlap_threads.
--
-- Columns:
--   global_pid      BIGINT  the calling process (globalTid with the thread bits cleared: a
--                           kernel's globalPid)
--   correlation_id  BIGINT  correlation id shared by the call and the kernels it launched
--   path_id         BIGINT  the open range's nvtx_tree.range_id (fp_path_lists.path_id)
WITH open_ranges AS MATERIALIZED (
    SELECT t.range_id::BIGINT AS range_id, t.global_tid, t.start, t."end"
    FROM nvtx_tree AS t
    JOIN nvtx_text AS x ON x.row_id = t.range_id
    WHERE x."end" IS NULL
      AND t.global_tid NOT IN (SELECT global_tid FROM fp_overlap_threads)
),
late_calls AS (
    SELECT c.globalTid AS global_tid, c.correlationId AS correlation_id, c.start, c."end"
    FROM runtime_calls AS c
    WHERE c.globalTid IN (SELECT global_tid FROM open_ranges)
      AND c."end" > (SELECT min("end") FROM open_ranges)
)
SELECT (c.global_tid - tid_of(c.global_tid))::BIGINT AS global_pid,
       c.correlation_id::BIGINT AS correlation_id,
       arg_max(o.range_id, (o.start, o.range_id)) AS path_id
FROM late_calls AS c
JOIN open_ranges AS o
  ON o.global_tid = c.global_tid AND o.start <= c.start AND c."end" > o."end"
GROUP BY ALL
