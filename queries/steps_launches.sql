-- steps_launches: every kernel and every graph-level CUDA graph replay that passes the
-- filter, per device in launch order (start, then stream), as name ids: the sequence whose
-- period tracelens steps looks for when the trace has no step markers. A replay traced at
-- graph level (nsys's default --cuda-graph-trace=graph) stands for the kernels it ran,
-- which the export does not list: a torch.compile / vLLM decode step is often a few
-- kernels and one replay that holds nearly all of the step's GPU time.
--
-- Parameters: $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter
--
-- Columns:
--   device    BIGINT  CUDA device ordinal
--   start_ns  BIGINT  kernel (or replay) start, ns from session start
--   end_ns    BIGINT  kernel (or replay) end, ns
--   name_id   BIGINT  StringIds id of the kernel's demangled name; NULL for a replay
--   graph_id  BIGINT  the replayed graph's graphId; NULL for a kernel
WITH launches AS (
    SELECT deviceId, streamId, start, "end", demangledName AS name_id, NULL::BIGINT AS graph_id
    FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
    UNION ALL
    SELECT deviceId, streamId, start, "end", NULL, graphId
    FROM filtered_graph_replays($device, $pid, $stream, $start_ns, $end_ns,
                                selection := $selection)
)
SELECT deviceId::BIGINT AS device, start::BIGINT AS start_ns, "end"::BIGINT AS end_ns,
       name_id::BIGINT AS name_id, graph_id::BIGINT AS graph_id
FROM launches
ORDER BY deviceId, start, streamId, "end", graph_id NULLS FIRST
