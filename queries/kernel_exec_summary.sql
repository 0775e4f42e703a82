-- kernel_exec_summary: per kernel, how long the launching API call took, how long the
-- kernel waited in the queue and how long it ran, the semantics of `nsys stats --report
-- cuda_kern_exec_sum` (2022.4: kernexecsum). Long API times next to short kernels mean a
-- launch-bound program; long queue times mean the GPU was busy (not inherently bad).
-- One row per launching process, thread, device, API function and kernel name; ordered by
-- mean total time, largest first.
--
-- Per launch: API time = call end - call start; queue time = kernel start - call end, only
-- when >= 0 (a kernel can start before its launch call returns); kernel time = kernel end -
-- kernel start; total = max(call end, kernel end) - call start (the phases overlap).
-- A kernel is matched to every API row with its process and correlationId, as nsys does
-- (launched_by, queries/_shared.sql).
--
-- Parameters:
--   $name_kind  VARCHAR  kernel name: 'demangled' | 'short' | 'mangled' (mangled falls back
--                        to demangled where the export has none)
--   $pid        BIGINT   only launches by this operating-system process (NULL: all)
--
-- Columns (times in ns; averages, medians and standard deviations rounded to 0.1; the
-- standard deviation is the sample one, 0 for one launch):
--   pid, tid, device          BIGINT   launching process and thread, CUDA device
--   count                     BIGINT   launches
--   queued                    BIGINT   launches with a queue time (>= 0)
--   total_avg_ns .. total_stddev_ns    total time: avg, med, min, max, stddev
--   api_avg_ns .. api_stddev_ns        API time
--   queue_avg_ns .. queue_stddev_ns    queue time (NULL when no launch queued; stddev 0)
--   kernel_avg_ns .. kernel_stddev_ns  kernel time
--   api                       VARCHAR  API function (version suffix removed)
--   name                      VARCHAR  kernel name
WITH launches AS (
    SELECT
        pid_of(r.globalTid) AS pid,
        tid_of(r.globalTid) AS tid,
        k.deviceId AS device,
        r.nameId,
        CASE $name_kind
            WHEN 'short' THEN k.shortName
            WHEN 'mangled' THEN coalesce(k.mangledName, k.demangledName)
            ELSE k.demangledName
        END AS name_id,
        r."end" - r.start AS api_ns,
        CASE WHEN k.start - r."end" >= 0 THEN k.start - r."end" END AS queue_ns,
        k."end" - k.start AS kernel_ns,
        greatest(r."end", k."end") - r.start AS total_ns
    FROM kernels AS k
    JOIN filtered_runtime_calls($pid, NULL, NULL) AS r
      ON launched_by(k.globalPid, k.correlationId, r.globalTid, r.correlationId)
),
per_group AS (
    SELECT
        pid, tid, device, nameId, name_id,
        count(*) AS count,
        count(queue_ns) AS queued,
        avg(total_ns) AS t_avg, median(total_ns) AS t_med, min(total_ns) AS t_min,
        max(total_ns) AS t_max, coalesce(stddev_samp(total_ns), 0) AS t_sd,
        avg(api_ns) AS a_avg, median(api_ns) AS a_med, min(api_ns) AS a_min,
        max(api_ns) AS a_max, coalesce(stddev_samp(api_ns), 0) AS a_sd,
        avg(queue_ns) AS q_avg, median(queue_ns) AS q_med, min(queue_ns) AS q_min,
        max(queue_ns) AS q_max,
        coalesce(stddev_samp(queue_ns), 0) AS q_sd,
        avg(kernel_ns) AS k_avg, median(kernel_ns) AS k_med, min(kernel_ns) AS k_min,
        max(kernel_ns) AS k_max, coalesce(stddev_samp(kernel_ns), 0) AS k_sd
    FROM launches
    GROUP BY pid, tid, device, nameId, name_id
)
SELECT
    pid, tid, device, count, queued,
    round(t_avg, 1) AS total_avg_ns, round(t_med, 1) AS total_med_ns,
    t_min AS total_min_ns, t_max AS total_max_ns, round(t_sd, 1) AS total_stddev_ns,
    round(a_avg, 1) AS api_avg_ns, round(a_med, 1) AS api_med_ns,
    a_min AS api_min_ns, a_max AS api_max_ns, round(a_sd, 1) AS api_stddev_ns,
    round(q_avg, 1) AS queue_avg_ns, round(q_med, 1) AS queue_med_ns,
    q_min AS queue_min_ns, q_max AS queue_max_ns, round(q_sd, 1) AS queue_stddev_ns,
    round(k_avg, 1) AS kernel_avg_ns, round(k_med, 1) AS kernel_med_ns,
    k_min AS kernel_min_ns, k_max AS kernel_max_ns, round(k_sd, 1) AS kernel_stddev_ns,
    string_or_id(api_name(sa.value), per_group.nameId) AS api,
    string_or_id(sk.value, per_group.name_id) AS name
FROM per_group
LEFT JOIN strings AS sa ON sa.id = per_group.nameId
LEFT JOIN strings AS sk ON sk.id = per_group.name_id
ORDER BY total_avg_ns DESC, pid, tid, device, api, name
