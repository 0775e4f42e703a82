-- activity_bins: GPU activity aggregated into time bins per lane (device, stream),
-- so that a picture of millions of kernels is drawn with at most lanes x bins rectangles.
-- Each kernel, memcpy and memset is clipped to [$t0, $t1) and its busy time is split over
-- the bins it covers.
--
-- Parameters:
--   $t0, $t1      BIGINT     window, ns from session start ($t1 > $t0)
--   $bins         BIGINT     number of equal-width bins over the window
--   (the temp table activity_categories(name_id BIGINT, category VARCHAR), which
--   tracelens.activity fills: the category of each kernel name id of $name_kind; kernels
--   whose id it lacks are 'other')
--   $name_kind    VARCHAR    'demangled' | 'short'
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
ev AS (
    SELECT k.deviceId AS device, k.streamId AS stream, k.start, k."end",
           coalesce(cat.category, 'other') AS category
    FROM kernels AS k
    LEFT JOIN cat ON cat.id = (CASE $name_kind WHEN 'short' THEN k.shortName ELSE k.demangledName END)
    WHERE k."end" >= $t0 AND k.start < $t1
    UNION ALL
    SELECT deviceId, streamId, start, "end", 'memcpy' FROM memcpys
    WHERE "end" >= $t0 AND start < $t1
    UNION ALL
    SELECT deviceId, streamId, start, "end", 'memset' FROM memsets
    WHERE "end" >= $t0 AND start < $t1
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
