-- stakeout_spread: spread of the durations of some kernels, one row each (the stakeout of
-- several kernels at once, tracelens.stakeout.kernel_profiles).
--
-- Parameters:
--   $names      VARCHAR    kernel names (of $name_kind), as one JSON list
--                          (tracelens.trace.list_param)
--   $name_kind  VARCHAR    'demangled' | 'short'
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter (NULL: all;
--                          a launch is kept when it ends at or after $start_ns and starts
--                          before $end_ns: in_window, nsys's rule)
--
-- Columns (ns):
--   name       VARCHAR
--   launches   BIGINT
--   total_ns   BIGINT
--   min_ns, p10_ns, p50_ns, p90_ns, p99_ns, max_ns   DOUBLE (interpolated quantiles)
--   cv         DOUBLE  coefficient of variation (stddev / mean; 0 for one launch)
--   devices    BIGINT  distinct devices it ran on
--   streams    BIGINT  distinct (device, stream) pairs it ran on
WITH sel AS (
    SELECT s.id, s.value AS name FROM strings AS s
    WHERE s.value IN (SELECT unnest(text_list($names)))
),
d AS (
    SELECT sel.name, k."end" - k.start AS dur, k.deviceId, k.streamId
    FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS k
    JOIN sel ON sel.id = (CASE $name_kind WHEN 'short' THEN k.shortName ELSE k.demangledName END)
),
per_name AS (
    SELECT name, launch_spread(dur, deviceId, streamId) AS spread FROM d GROUP BY name
)
SELECT name, unnest(spread)
FROM per_name
ORDER BY spread.total_ns DESC, name
