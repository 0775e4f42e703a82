-- Probe of queries/_shared.sql's launch_spread: two groups of launches on devices and streams.
WITH launches(grp, d, device, stream) AS (
    VALUES ('a', 10, 0, 7), ('a', 20, 0, 7), ('a', 30, 0, 8), ('a', 40, 1, 7), ('b', 5, 2, 3)
),
per_group AS (SELECT grp, launch_spread(d, device, stream) AS s FROM launches GROUP BY grp)
SELECT grp, unnest(s) FROM per_group ORDER BY grp
