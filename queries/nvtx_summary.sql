-- nvtx_summary: NVTX range durations per range name and style, the semantics of `nsys stats
-- --report nvtx_sum` (2022.4: nvtxsum; with $style, nvtx_pushpop_sum / nvtx_startend_sum,
-- 2022.4: nvtxppsum / nvtxsesum). CPU time: how long each range was open, not GPU time.
-- Ranges are named as nsys names them ('domain:label' in a named domain); a range left open
-- at the end of the capture lasts until the latest NVTX timestamp (see _nvtx_ranges.sql).
-- Needs nvtx_ranges() (Trace.load_nvtx_text). Ordered by total time, largest first.
--
-- Parameters:
--   $style  VARCHAR  'PushPop' | 'StartEnd' | NULL (both; Time % is of the ranges kept)
--
-- Columns:
--   time_pct   DOUBLE   share of the summed duration of all rows, %, rounded to 0.1
--   total_ns   BIGINT   summed duration, ns
--   instances  BIGINT   ranges
--   avg_ns     DOUBLE   mean duration, ns, rounded to 0.1
--   med_ns     DOUBLE   median duration (mean of the middle two for an even count), ns, 0.1
--   min_ns     BIGINT   shortest, ns
--   max_ns     BIGINT   longest, ns
--   stddev_ns  DOUBLE   sample standard deviation (n - 1; 0 for one range), ns, 0.1
--   style      VARCHAR  'PushPop' or 'StartEnd'
--   name       VARCHAR  range name
WITH per_name AS (
    SELECT name, style, duration_stats("end" - start) AS stats
    FROM nvtx_ranges()
    WHERE $style IS NULL OR style = $style
    GROUP BY name, style
)
SELECT unnest(nsys_stats(stats)), style, name
FROM per_name
ORDER BY stats.total_ns DESC, name, style
