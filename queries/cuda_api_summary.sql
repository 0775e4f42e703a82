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
    SELECT nameId, duration_stats("end" - start) AS stats
    FROM filtered_runtime_calls($pid, NULL, NULL)
    GROUP BY nameId
)
SELECT * RENAME (instances AS calls)
FROM (
    SELECT
        unnest(nsys_stats(stats)),
        string_or_id(api_name(s.value), per_id.nameId) AS name
    FROM per_id
    LEFT JOIN strings AS s ON s.id = per_id.nameId
)
ORDER BY total_ns DESC, name
