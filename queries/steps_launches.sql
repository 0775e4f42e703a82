-- steps_launches: every kernel and every graph-level CUDA graph replay that passes the
-- filter, per device in launch order (the order the host launched them: correlation id,
-- then start, stream, end: the kernels of one CUDA graph launch share its correlation id;
-- correlation ids are numbered per process, so the processes that launched on one device
-- come one after another, by their first launch there, then by globalPid),
-- as name ids: the sequence whose period tracelens steps looks for when the trace has no
-- step markers. Not GPU start order: concurrent streams interleave on the GPU as timing has
-- it, differently from run to run of one program. A replay traced at
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
--
-- The filter is applied after the union, not in each branch (filtered_kernels,
-- filtered_graph_replays): with the selection's mark join below the union DuckDB sorted the
-- 5M launches of the bench trace in 1.45 CPU s, with it above in 0.56 (the same plan
-- otherwise).
WITH launches AS (
    SELECT deviceId, streamId, globalPid, correlationId, start, "end",
           demangledName AS name_id, NULL::BIGINT AS graph_id
    FROM kernels
    UNION ALL
    SELECT deviceId, streamId, globalPid, correlationId, start, "end", NULL, graphId
    FROM graph_replays
)
SELECT deviceId AS device, start AS start_ns, "end" AS end_ns, name_id, graph_id
FROM launches
WHERE event_passes(deviceId, streamId, globalPid, start, "end", $device, $pid, $stream, $start_ns,
                   $end_ns)
  AND in_selection(globalPid, correlationId, $selection)
ORDER BY device, min(start) OVER (PARTITION BY deviceId, globalPid), globalPid NULLS LAST,
         correlationId NULLS LAST, start_ns, streamId, end_ns, graph_id NULLS FIRST
