-- cuda_api_summary: time in CUDA API calls per function, the semantics of `nsys stats
-- --report cuda_api_sum` (2022.4: cudaapisum): every row of the runtime table (runtime and
-- driver calls), grouped by the function's name id, the name printed without nsys's
-- version suffix ('cudaLaunchKernel_v7000' -> 'cudaLaunchKernel'). CPU time: how long the
-- calling thread was inside the call. Ordered by total time, largest first.
--
-- Parameters:
--   $pid  BIGINT  only the calls of this operating-system process (NULL: all)
--
-- Columns:
--   time_pct   DOUBLE   share of the summed duration of all rows, %, rounded to 0.1
--   total_ns   BIGINT   summed duration, ns
--   calls      BIGINT   calls
--   avg_ns     DOUBLE   mean duration, ns, rounded to 0.1
--   med_ns     DOUBLE   median duration (mean of the middle two for an even count), ns, 0.1
--   min_ns     BIGINT   shortest, ns
--   max_ns     BIGINT   longest, ns
--   stddev_ns  DOUBLE   sample standard deviation (n - 1; 0 for one call), ns, 0.1
--   name       VARCHAR  API function
WITH per_id AS (
    SELECT
        nameId,
        sum("end" - start) AS total_ns,
        count(*) AS calls,
        avg("end" - start) AS avg_ns,
        median("end" - start) AS med_ns,
        min("end" - start) AS min_ns,
        max("end" - start) AS max_ns,
        coalesce(stddev_samp("end" - start), 0) AS stddev_ns
    FROM filtered_runtime_calls($pid, NULL, NULL)
    GROUP BY nameId
)
SELECT
    round(total_ns * 100.0 / sum(total_ns) OVER (), 1) AS time_pct,
    total_ns::BIGINT AS total_ns,
    calls,
    round(avg_ns, 1) AS avg_ns,
    round(med_ns, 1) AS med_ns,
    min_ns,
    max_ns,
    round(stddev_ns, 1) AS stddev_ns,
    coalesce(api_name(s.value), '<unknown string id ' || per_id.nameId || '>') AS name
FROM per_id
LEFT JOIN strings AS s ON s.id = per_id.nameId
ORDER BY total_ns DESC, name
