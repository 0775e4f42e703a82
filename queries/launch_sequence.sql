-- launch_sequence: every kernel launch in time order per device, as name ids, for aligning
-- the launch sequences of two runs (compare/align.py; the names come from launch_names).
-- Parameters:
--   $name_kind          VARCHAR  'short' | 'demangled'
--   $start_ns, $end_ns  BIGINT or NULL (time window, nsys rule)
--   $selection          BIGINT or NULL: a work_selection id (--nvtx, --step)
-- Columns:
--   device    BIGINT   CUDA device ordinal
--   name_id   BIGINT   StringIds id of the kernel name of the requested kind
SELECT
    deviceId AS device,
    CASE $name_kind WHEN 'short' THEN shortName ELSE demangledName END AS name_id
FROM filtered_kernels(NULL, NULL, NULL, $start_ns, $end_ns, selection := $selection)
ORDER BY deviceId, start, streamId, "end"
