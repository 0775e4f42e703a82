-- ranks_gpu_time: where one rank's GPU time went, summed over its devices. One row.
-- Overlapping work on a device counts once (each figure is a union of intervals per
-- device). Needs the temp table rank_comm_kernels(name_id BIGINT, kind VARCHAR): the
-- demangled-name ids of the communication kernels (the library fills it).
-- Parameters: none.
-- Columns:
--   first_ns                   BIGINT  start of the first kernel, memcpy or memset, ns from
--                                      session start (NULL without GPU work)
--   last_ns                    BIGINT  end of the last one, ns from session start
--   span_ns                    BIGINT  last_ns - first_ns, ns
--   busy_ns                    BIGINT  time any kernel, memcpy or memset ran, ns
--   compute_ns                 BIGINT  time any kernel other than communication ran, ns
--   communication_ns           BIGINT  time any communication kernel ran, ns
--   exposed_communication_ns   BIGINT  time communication ran and nothing else did
--                                      (busy minus everything but communication), ns
--   kernels                    BIGINT  kernels launched
--   devices                    BIGINT  CUDA devices with GPU work
WITH work AS (
    SELECT k.deviceId, k.start, k."end",
           r.name_id IS NOT NULL AS is_comm, TRUE AS is_kernel
    FROM kernels AS k
    LEFT JOIN rank_comm_kernels AS r ON r.name_id = k.demangledName
    UNION ALL SELECT deviceId, start, "end", FALSE, FALSE FROM memcpys
    UNION ALL SELECT deviceId, start, "end", FALSE, FALSE FROM memsets
),
-- The four sets whose union length is wanted: all work, compute kernels, communication
-- kernels, and all work but communication.
sets AS (
    SELECT 'busy' AS s, deviceId, start, "end" FROM work
    UNION ALL SELECT 'compute', deviceId, start, "end" FROM work WHERE is_kernel AND NOT is_comm
    UNION ALL SELECT 'comm', deviceId, start, "end" FROM work WHERE is_comm
    UNION ALL SELECT 'not_comm', deviceId, start, "end" FROM work WHERE NOT is_comm
),
-- Union length: each interval adds only the part of it that ends after every earlier
-- interval of its set on its device (one sorted window pass).
covered AS (
    SELECT s, start, "end",
        max("end") OVER (
            PARTITION BY s, deviceId ORDER BY start, "end"
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ) AS prev_end
    FROM sets
),
lengths AS (
    SELECT s, sum(CASE
        WHEN prev_end IS NULL OR start >= prev_end THEN "end" - start
        WHEN "end" > prev_end THEN "end" - prev_end
        ELSE 0
    END) AS ns
    FROM covered
    GROUP BY s
),
len AS (
    SELECT
        coalesce(max(ns) FILTER (WHERE s = 'busy'), 0) AS busy,
        coalesce(max(ns) FILTER (WHERE s = 'compute'), 0) AS compute,
        coalesce(max(ns) FILTER (WHERE s = 'comm'), 0) AS comm,
        coalesce(max(ns) FILTER (WHERE s = 'not_comm'), 0) AS not_comm
    FROM lengths
)
SELECT
    (SELECT min(start) FROM work) AS first_ns,
    (SELECT max("end") FROM work) AS last_ns,
    (SELECT max("end") - min(start) FROM work) AS span_ns,
    busy::BIGINT AS busy_ns,
    compute::BIGINT AS compute_ns,
    comm::BIGINT AS communication_ns,
    (busy - not_comm)::BIGINT AS exposed_communication_ns,
    (SELECT count(*) FROM work WHERE is_kernel) AS kernels,
    (SELECT count(DISTINCT deviceId) FROM work) AS devices
FROM len
