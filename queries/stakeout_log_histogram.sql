-- stakeout_log_histogram: the duration distribution of some kernels, as counts in
-- logarithmic bins shared by every kernel and trace (bin b holds durations in
-- [2^(b/$per_octave), 2^((b+1)/$per_octave)) ns), so two traces' histograms line up.
--
-- Parameters:
--   $names       VARCHAR    kernel names (of $name_kind), as one JSON list
--                           (tracelens.trace.list_param)
--   $name_kind   VARCHAR    'demangled' | 'short'
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter (NULL: all;
--                          a launch is kept when it ends at or after $start_ns and starts
--                          before $end_ns: in_window, nsys's rule)
--   $per_octave  BIGINT     bins per doubling of duration
--
-- Columns:
--   name      VARCHAR  kernel name
--   bin       BIGINT   log bin (see above); durations under 1 ns fall in bin 0
--   launches  BIGINT   launches whose duration falls in the bin
WITH sel AS (
    SELECT s.id, s.value AS name FROM strings AS s
    WHERE s.value IN (SELECT unnest(text_list($names)))
),
d AS (
    SELECT sel.name, greatest(k."end" - k.start, 1) AS dur
    FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS k
    JOIN sel ON sel.id = (CASE $name_kind WHEN 'short' THEN k.shortName ELSE k.demangledName END)
)
SELECT name, floor(log2(dur) * $per_octave)::BIGINT AS bin, count(*) AS launches
FROM d
GROUP BY name, bin
ORDER BY name, bin
