-- nvtx_kernel_summary: kernels per NVTX range group, the semantics of `nsys stats --report
-- nvtx_kern_sum` (2022.4: nvtxkernsum): each kernel counts in every range that holds its
-- launching call (the innermost and all its ancestors, nvtx_paths.stack; on a thread whose
-- ranges overlap, every range containing the call, nvtx_overlap_holders), grouped by range,
-- kernel name and the launching process and thread. Kernels launched outside every range
-- form the rows whose range is NULL, as in nsys. Needs nvtx_op_ranges, nvtx_paths,
-- nvtx_overlap_calls and nvtx_overlap_holders (tracelens.nvtx builds them).
-- Ordered by range, pid, tid, then total time, largest first.
--
-- Parameters:
--   $group_by   VARCHAR  'name' | 'path' | 'torch' (see nvtx_gpu_projection_summary)
--   $name_kind  VARCHAR  kernel name: 'demangled' | 'short'
--
-- Columns:
--   range       VARCHAR  the range group (NULL: launched outside every range)
--   style       VARCHAR  'PushPop' | 'StartEnd'
--   pid, tid    BIGINT   process and thread that launched the kernels
--   ranges      BIGINT   range instances of the group holding these kernels
--   kernels     BIGINT   kernel instances (a kernel inside two same-named nested ranges
--                        counts once here, twice in the times, as in nsys)
--   total_ns    BIGINT   summed kernel duration, ns
--   avg_ns      DOUBLE   mean, ns, 0.1
--   med_ns      DOUBLE   median, ns, 0.1
--   min_ns      BIGINT   shortest, ns
--   max_ns      BIGINT   longest, ns
--   stddev_ns   DOUBLE   sample standard deviation (n - 1; 0 for one), ns, 0.1
--   name        VARCHAR  kernel name
WITH kernels_held AS (
    SELECT o.globalPid, o.correlationId, o.start, o.device, o."end" - o.start AS dur_ns,
           CASE $name_kind WHEN 'short' THEN o.short_id ELSE o.name_id END AS name_id,
           o.global_tid, o.range_id
    FROM nvtx_op_ranges AS o
    WHERE o.kind = 'kernel'
),
ancestry AS (
    SELECT t.range_id, CAST(a.id AS BIGINT) AS holder_id
    FROM nvtx_paths AS t
    CROSS JOIN unnest(string_split(t.stack[2:], ':')) AS a(id)
    WHERE t.range_id IN (SELECT range_id FROM kernels_held)
),
holders AS (
    -- kernels launched on a thread whose ranges overlap: every range holding the call
    -- (nvtx_overlap_holders); elsewhere the innermost range and its ancestors
    SELECT k.*, a.holder_id
    FROM kernels_held AS k
    LEFT JOIN ancestry AS a ON a.range_id = k.range_id
    WHERE NOT EXISTS (
        SELECT 1 FROM nvtx_overlap_calls AS c
        WHERE c.global_pid = k.globalPid AND c.correlation_id = k.correlationId)
    UNION ALL
    SELECT k.*, o.range_id
    FROM kernels_held AS k
    JOIN nvtx_overlap_calls AS c
      ON c.global_pid = k.globalPid AND c.correlation_id = k.correlationId
    LEFT JOIN nvtx_overlap_holders AS o
      ON o.global_pid = k.globalPid AND o.correlation_id = k.correlationId
),
pairs AS (
    SELECT k.*,
           CASE $group_by
               WHEN 'path' THEN h.path
               WHEN 'torch' THEN torch_label(h.name)
               ELSE h.name
           END AS range,
           h.style
    FROM holders AS k
    LEFT JOIN nvtx_paths AS h ON h.range_id = k.holder_id
)
SELECT
    p.range,
    p.style,
    pid_of(p.global_tid) AS pid,
    tid_of(p.global_tid) AS tid,
    count(DISTINCT p.holder_id) AS ranges,
    count(DISTINCT (p.globalPid, p.correlationId, p.start, p.device)) AS kernels,
    sum(p.dur_ns)::BIGINT AS total_ns,
    round(avg(p.dur_ns), 1) AS avg_ns,
    round(median(p.dur_ns), 1) AS med_ns,
    min(p.dur_ns) AS min_ns,
    max(p.dur_ns) AS max_ns,
    round(coalesce(stddev_samp(p.dur_ns), 0), 1) AS stddev_ns,
    coalesce(s.value, '<unknown string id ' || p.name_id || '>') AS name
FROM pairs AS p
LEFT JOIN strings AS s ON s.id = p.name_id
GROUP BY p.range, p.style, p.global_tid, p.name_id, s.value
ORDER BY p.range NULLS LAST, pid, tid, total_ns DESC, name
