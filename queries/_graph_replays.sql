-- _graph_replays: CUDA graph replays traced at graph level (nsys --cuda-graph-trace=graph,
-- the default), which pass the filters. Their kernels, memcpys and memsets are in none of
-- the other views, so every kernel/memory figure leaves this time out. One row.
--
-- Parameters (NULL means "no filter"), as kernel_summary:
--   $device            BIGINT   CUDA device ordinal (graph_replays.deviceId)
--   $pid               BIGINT   operating-system process id
--   $stream            BIGINT   CUDA stream id
--   $start_ns, $end_ns BIGINT   time window, ns from session start: as nsys, keep a replay
--                               that ends at or after $start_ns and starts before $end_ns
--                               (in_window in _shared.sql)
--   $selection         BIGINT   a work_selection id (--nvtx, --step): only the GPU work in it
--
-- Columns:
--   replays   BIGINT  graph replays (one per graph launch executed)
--   total_ns  BIGINT  sum of their durations, ns (overlapping replays count twice, as
--                     kernels do in census); 0 when there are none
SELECT count(*) AS replays, coalesce(sum("end" - start), 0)::BIGINT AS total_ns
FROM filtered_graph_replays($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
