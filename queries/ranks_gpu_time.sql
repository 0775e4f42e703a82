-- ranks_gpu_time: where one rank's GPU time went, summed over its devices. One row.
-- Overlapping work on a device counts once: one sweep over the start and end edges of
-- all work per device, counting how many communication kernels, other kernels and copies or
-- memsets are running after each edge; each figure is the time a condition on those counts
-- holds (measured on 5M kernels: 0.74x the time and 0.78x the peak memory of four separate
-- interval unions). Needs the temp table rank_comm_kernels(name_id BIGINT, kind VARCHAR): the
-- demangled-name ids of the communication kernels (the library fills it).
-- Parameters: $pid (BIGINT or NULL: every process): only this process's work (one rank of an
-- export that holds several ranks' processes).
-- Columns:
--   first_ns                   BIGINT  start of the first kernel, memcpy or memset, ns from
--                                      session start (NULL without GPU work)
--   last_ns                    BIGINT  end of the last one, ns from session start
--   span_ns                    BIGINT  last_ns - first_ns, ns
--   busy_ns                    BIGINT  time any kernel, memcpy or memset ran, ns
--   compute_ns                 BIGINT  time any kernel other than communication ran, ns
--   communication_ns           BIGINT  time any communication kernel ran, ns
--   exposed_communication_ns   BIGINT  time communication ran and nothing else did, ns
--   kernels                    BIGINT  kernels launched
--   devices                    BIGINT  CUDA devices with GPU work
WITH work AS MATERIALIZED (
    SELECT k.deviceId, k.start, k."end",
           CASE WHEN r.name_id IS NOT NULL THEN 1 ELSE 0 END AS comm,
           CASE WHEN r.name_id IS NULL THEN 1 ELSE 0 END AS compute,
           0 AS other
    FROM kernels AS k
    LEFT JOIN rank_comm_kernels AS r ON r.name_id = k.demangledName
    WHERE of_process(k.globalPid, $pid)
    UNION ALL SELECT deviceId, start, "end", 0, 0, 1 FROM memcpys WHERE of_process(globalPid, $pid)
    UNION ALL SELECT deviceId, start, "end", 0, 0, 1 FROM memsets WHERE of_process(globalPid, $pid)
),
edges AS (
    SELECT deviceId, start AS ts, comm, compute, other FROM work
    UNION ALL SELECT deviceId, "end", -comm, -compute, -other FROM work
),
-- After each edge: what runs until the next edge of the device (seg ns). Edges at the same
-- time give zero-length segments, so their order among themselves does not matter.
state AS (
    SELECT
        lead(ts) OVER w - ts AS seg,
        sum(comm) OVER w AS n_comm,
        sum(compute) OVER w AS n_compute,
        sum(other) OVER w AS n_other
    FROM edges
    WINDOW w AS (PARTITION BY deviceId ORDER BY ts ROWS UNBOUNDED PRECEDING)
),
len AS (
    SELECT
        coalesce(sum(seg) FILTER (WHERE n_comm + n_compute + n_other > 0), 0) AS busy,
        coalesce(sum(seg) FILTER (WHERE n_compute > 0), 0) AS compute,
        coalesce(sum(seg) FILTER (WHERE n_comm > 0), 0) AS comm,
        coalesce(sum(seg) FILTER (WHERE n_comm > 0 AND n_compute + n_other = 0), 0) AS exposed
    FROM state
)
SELECT
    (SELECT min(start) FROM work) AS first_ns,
    (SELECT max("end") FROM work) AS last_ns,
    (SELECT max("end") - min(start) FROM work) AS span_ns,
    busy::BIGINT AS busy_ns,
    compute::BIGINT AS compute_ns,
    comm::BIGINT AS communication_ns,
    exposed::BIGINT AS exposed_communication_ns,
    (SELECT count(*) FROM work WHERE other = 0) AS kernels,
    (SELECT count(DISTINCT deviceId) FROM work) AS devices
FROM len
