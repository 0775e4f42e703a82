-- steps_launch_rows: every kernel and every graph-level CUDA graph replay that passes the
-- filter, in no particular order, as few and as narrow columns as the launch sequence
-- needs: tracelens.steps_period.launch_order puts them in launch order (the order of
-- steps_launches: device, then the order the host launched them, the process by its first
-- launch on the device and its correlation id, then start, stream, end, a replay after the
-- kernels it ties with). Sorting 5M launches here
-- cost 2.3 CPU s of DuckDB's sort on the bench trace (five keys and their payload); polars
-- sorts one 64-bit key (device, correlation id) in 0.3 and breaks the few ties on their
-- own. The filter macros read globalPid only with a selection (the mark join of
-- in_selection read it always).
--
-- Parameters:
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter
--   $streams  BOOLEAN  read each launch's stream; false: stream is NULL and DuckDB leaves
--     streamId out of the scan (~0.2 CPU s of the bench trace's 5M kernels read directly).
--     The stream orders only launches that tie on device, correlation id and start
--     (kernels of one CUDA graph launch starting in the same ns): launch_order says when
--     it needs them, and the step search reads them then
--   $pids     BOOLEAN  read each launch's process; false: pid is NULL and DuckDB leaves
--     globalPid out of the scan (~0.17 CPU s and 20 MB of the bench trace's 5M kernels).
--     Only launches of several processes on one device need it: the step search asks for
--     it unless the export's context table lists one process per device
--     (tracelens.steps_order.one_process_devices) or the filter names a process
--
-- Columns:
--   device    INTEGER  CUDA device ordinal
--   stream    BIGINT   CUDA stream id (orders launches that start at the same ns); NULL
--                      unless $streams
--   start_ns  BIGINT   kernel (or replay) start, ns from session start
--   end_ns    BIGINT   kernel (or replay) end, ns
--   correlation_id BIGINT  CUPTI correlation id of the launching call (the host's launch
--                      order within a process; the kernels of one CUDA graph launch share it)
--   pid       INTEGER  operating-system pid of the launching process (NULL unless $pids):
--                      correlation ids are numbered per process, so launch_order takes one
--                      process's launches after another's (tracelens.steps_order.process_ranks);
--                      4 bytes a launch, not globalPid's 8 (20 MB less on 5M launches)
--   token     BIGINT   what was launched: the kernel's demangled-name StringIds id (>= 0),
--                      -1 for a kernel without a name, -2 - graphId for a replay
SELECT deviceId::INTEGER AS device, CASE WHEN $streams THEN streamId END::BIGINT AS stream,
       start AS start_ns, "end" AS end_ns, correlationId AS correlation_id,
       coalesce(demangledName, -1) AS token,
       CASE WHEN $pids THEN pid_of(globalPid) END::INTEGER AS pid
FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
UNION ALL
SELECT deviceId::INTEGER, CASE WHEN $streams THEN streamId END, start, "end", correlationId,
       coalesce(-2 - graphId, -1),
       CASE WHEN $pids THEN pid_of(globalPid) END::INTEGER
FROM filtered_graph_replays($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
