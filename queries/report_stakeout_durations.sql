-- report_stakeout_durations: stakeout_spread and stakeout_log_histogram of some kernels, from
-- the GPU work the report has already read once (tracelens.util.work_in_order's rows), for
-- an export read directly: there each read of the kernel table costs about a census, and
-- the launch configurations alone are then read, by SQLite
-- (report_stakeout_configs_export.sql). Same rows as those two queries.
-- One row per part: `part` says which query's row it is; the other part's columns are NULL.
--
-- Parameters:
--   $work        VARCHAR    name of the registered relation with work_in_order.sql's columns
--                           (kind, device, stream, start_ns, end_ns, name_id, short_id; kind
--                           0 are kernels): the report hands over only the launches of
--                           $names (tracelens.report.stakeoutread picks them out first); any
--                           other rows are left out here
--   $names       VARCHAR    kernel names (of $name_kind), as one JSON list
--                           (tracelens.trace.list_param)
--   $name_kind   VARCHAR    'demangled' | 'short'
--   $per_octave  BIGINT     histogram bins per doubling of duration
--
-- Columns (ns):
--   part      VARCHAR  'spread' | 'histogram'
--   rank      BIGINT   the row's place in its part, in that query's order (1 first)
--   name      VARCHAR  kernel name
--   spread:    launches, total_ns, min_ns, p10_ns, p50_ns, p90_ns, p99_ns, max_ns, cv,
--              devices, streams (as stakeout_spread)
--   histogram: bin, launches (as stakeout_log_histogram)
WITH sel AS (
    SELECT s.id, s.value AS name FROM strings AS s
    WHERE s.value IN (SELECT unnest(text_list($names)))
),
-- Not materialized: each part scans the work (in memory) again, rather than holding the
-- selected launches.
launches AS NOT MATERIALIZED (
    SELECT sel.name, w.end_ns - w.start_ns AS dur, w.device, w.stream
    FROM query_table($work) AS w
    JOIN sel ON sel.id = (CASE $name_kind WHEN 'short' THEN w.short_id ELSE w.name_id END)
    WHERE w.kind = 0
),
spread AS (
    SELECT name, unnest(s)
    FROM (SELECT name, launch_spread(dur, device, stream) AS s FROM launches GROUP BY name)
),
histogram AS (
    SELECT name, floor(log2(greatest(dur, 1)) * $per_octave)::BIGINT AS bin,
           count(*) AS launches
    FROM launches
    GROUP BY name, bin
)
SELECT 'spread' AS part, row_number() OVER (ORDER BY total_ns DESC, name) AS rank, *
FROM spread
UNION ALL BY NAME
SELECT 'histogram' AS part, row_number() OVER (ORDER BY name, bin) AS rank, *
FROM histogram
ORDER BY part DESC, rank
