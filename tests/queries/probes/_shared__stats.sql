-- Probe of queries/_shared.sql's duration_stats and nsys_stats: two groups of durations.
WITH durations(grp, d) AS (VALUES ('a', 1), ('a', 2), ('a', 3), ('a', 10), ('b', 5)),
per_group AS (SELECT grp, duration_stats(d) AS stats FROM durations GROUP BY grp)
SELECT unnest(nsys_stats(stats)), grp FROM per_group ORDER BY grp
