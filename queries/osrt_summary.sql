-- osrt_summary: time in OS runtime library calls per function (poll, pthread_cond_wait,
-- ioctl, read, ...), the semantics of `nsys stats --report osrt_sum` (2022.4: osrtsum):
-- the rows of OSRT_API of eventClass 27 (a call; 31 and 32 only mark where nsys's OS
-- runtime tracing started and finished), grouped by the function's name id, the name as
-- StringIds holds it. CPU time: how long the calling thread was inside the call, blocked or
-- not (nsys records only calls longer than its --osrt-threshold, 1000 ns by default).
-- Ordered by total time, largest first.
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
--   name       VARCHAR  OS runtime function
WITH per_id AS (
    SELECT nameId, duration_stats("end" - start) AS stats
    FROM osrt_calls
    WHERE eventClass = 27 AND of_process(globalTid, $pid)
    GROUP BY nameId
)
SELECT * RENAME (instances AS calls)
FROM (
    SELECT
        unnest(nsys_stats(stats)),
        string_or_id(s.value, per_id.nameId) AS name
    FROM per_id
    LEFT JOIN strings AS s ON s.id = per_id.nameId
)
ORDER BY total_ns DESC, name
