-- steps_launches: every kernel that passes the filter, per device in launch order (start,
-- then stream), as name ids: the sequence whose period tracelens steps looks for when the
-- trace has no step markers.
--
-- Parameters: $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter
--
-- Columns:
--   device    BIGINT  CUDA device ordinal
--   start_ns  BIGINT  kernel start, ns from session start
--   end_ns    BIGINT  kernel end, ns
--   name_id   BIGINT  StringIds id of the demangled name
SELECT deviceId AS device, start AS start_ns, "end" AS end_ns, demangledName AS name_id
FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
ORDER BY deviceId, start, streamId, "end"
