-- stakeout_spread: spread of the durations of some kernels, one row each (the stakeout of
-- several kernels at once, tracelens.stakeout.kernel_profiles).
--
-- Parameters:
--   $names      VARCHAR[]  kernel names (of $name_kind)
--   $name_kind  VARCHAR    'demangled' | 'short'
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
    WHERE s.value IN (SELECT unnest($names))
),
d AS (
    SELECT sel.name, k."end" - k.start AS dur, k.deviceId, k.streamId
    FROM kernels AS k
    JOIN sel ON sel.id = (CASE $name_kind WHEN 'short' THEN k.shortName ELSE k.demangledName END)
)
SELECT
    name,
    count(*) AS launches,
    sum(dur)::BIGINT AS total_ns,
    min(dur)::DOUBLE AS min_ns,
    quantile_cont(dur, 0.1) AS p10_ns,
    quantile_cont(dur, 0.5) AS p50_ns,
    quantile_cont(dur, 0.9) AS p90_ns,
    quantile_cont(dur, 0.99) AS p99_ns,
    max(dur)::DOUBLE AS max_ns,
    coalesce(stddev_samp(dur) / nullif(avg(dur), 0), 0) AS cv,
    count(DISTINCT deviceId) AS devices,
    count(DISTINCT (deviceId, streamId)) AS streams
FROM d
GROUP BY name
ORDER BY total_ns DESC, name
