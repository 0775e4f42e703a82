-- activity_bins: GPU activity aggregated into time bins per lane (device, stream),
-- so that a picture of millions of kernels is drawn with at most lanes x bins rectangles.
-- Each kernel, memcpy and memset in the window [$t0, $t1) (in_window: nsys's rule) is
-- clipped to it and its busy time is split over the bins it covers.
--
-- Parameters:
--   $t0, $t1      BIGINT     window, ns from session start ($t1 > $t0)
--   $bins         BIGINT     number of equal-width bins over the window
--   (the temp table activity_categories(name_id BIGINT, category VARCHAR), which
--   tracelens.activity fills: the category of each kernel name id of $name_kind; kernels
--   whose id it lacks are 'other')
--   $name_kind    VARCHAR    'demangled' | 'short'
--   $work         VARCHAR    where the operations come from: 'trace' (the trace's
--                            kernels, memcpys and memsets views) or the name of a relation
--                            with work_in_order.sql's columns (kind, device, stream,
--                            start_ns, end_ns, name_id, short_id) that the caller
--                            registered: the GPU work the report already read, so this
--                            query reads no table of the trace (kinds other than 0-2 are
--                            left out, as the views hold none)
--
-- Columns:
--   device    BIGINT   CUDA device ordinal
--   stream    BIGINT   CUDA stream id
--   bin       BIGINT   0-based bin index
--   category  VARCHAR  kernel category, or 'memcpy' / 'memset'
--   busy_ns   DOUBLE   time events of this category occupy in the bin, ns
--   events    BIGINT   events of this category that start in the bin
WITH cat AS (
    SELECT name_id AS id, category FROM activity_categories
),
trace_kernels AS (
    SELECT 0::TINYINT AS kind, deviceId AS device, streamId AS stream, start AS start_ns,
           "end" AS end_ns, demangledName AS name_id, shortName AS short_id
    FROM kernels
),
trace_memory AS (
    SELECT 1::TINYINT AS kind, deviceId AS device, streamId AS stream, start AS start_ns,
           "end" AS end_ns
    FROM memcpys
    UNION ALL
    SELECT 2, deviceId, streamId, start, "end" FROM memsets
),
ev AS (
    SELECT k.device, k.stream, k.start_ns AS start, k.end_ns AS "end",
           coalesce(cat.category, 'other') AS category
    FROM query_table(CASE $work WHEN 'trace' THEN 'trace_kernels' ELSE $work END) AS k
    LEFT JOIN cat ON cat.id = (CASE $name_kind WHEN 'short' THEN k.short_id ELSE k.name_id END)
    WHERE k.kind = 0 AND in_window(k.start_ns, k.end_ns, $t0, $t1)
    UNION ALL
    SELECT device, stream, start_ns, end_ns, CASE kind WHEN 1 THEN 'memcpy' ELSE 'memset' END
    FROM query_table(CASE $work WHEN 'trace' THEN 'trace_memory' ELSE $work END)
    WHERE kind IN (1, 2) AND in_window(start_ns, end_ns, $t0, $t1)
),
clipped AS (
    SELECT device, stream, category,
           greatest(start, $t0) AS s,
           least(greatest("end", start), $t1) AS e,
           start >= $t0 AS starts_here,
           ($t1 - $t0)::DOUBLE / $bins AS bw
    FROM ev
),
binned AS (
    SELECT *,
           least(floor((s - $t0) / bw), $bins - 1)::BIGINT AS b0,
           least(floor((greatest(e - 1, s) - $t0) / bw), $bins - 1)::BIGINT AS b1
    FROM clipped
),
spread AS (
    -- Each event in every bin it covers (most cover one; a one-element list for them is
    -- cheaper than range()). One pass: reading `binned` twice (one bin / several)
    -- materialized it, ~0.5 CPU s more on 5M kernels.
    SELECT device, stream, category, s, e, starts_here, bw, b0,
           unnest(CASE WHEN b1 = b0 THEN [b0] ELSE range(b0, b1 + 1) END) AS bin
    FROM binned
)
SELECT
    device, stream, bin, category,
    sum(greatest(least(e, $t0 + (bin + 1) * bw) - greatest(s, $t0 + bin * bw), 0)) AS busy_ns,
    count(*) FILTER (WHERE bin = b0 AND starts_here) AS events
FROM spread
GROUP BY device, stream, bin, category
ORDER BY device, stream, bin, category
