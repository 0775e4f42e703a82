-- util_work: every GPU operation that passes the event filter (kernels, memcpys, memsets,
-- graph-level CUDA graph replays) with what util's sweeps and findings' GPU rules read, and
-- nothing else: work_in_order.sql's rows without the stream and short name (the launch
-- order that the diff and the step search need), with the CUDA context (nsys analyze's
-- rules report it). util alone and findings read this (one read serves findings' util
-- rules and its gpu_gaps and gpu_low_util); the diff and the report read work_in_order.
-- Unordered: tracelens.util.read_work sorts the rows by device and start.
--
-- Parameters:
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter (NULL: all; an
--     operation is kept when it ends at or after $start_ns and starts before $end_ns:
--     in_window, nsys's rule)
--   $context  BOOLEAN  read the CUDA context (findings); false: context is NULL and DuckDB
--     leaves the column out of the scan (util alone: ~0.15 CPU s of a 5M-kernel export
--     read directly)
--
-- Columns:
--   device        INTEGER  CUDA device ordinal (32 bits: 5M rows take 20 MB less)
--   start_ns      BIGINT   start, ns from session start
--   end_ns        BIGINT   end, ns
--   kind          TINYINT  0 kernel, 1 memcpy, 2 memset, 3 graph-level CUDA graph replay
--   name_id       BIGINT   kernels: StringIds id of the demangled name; else NULL
--   pid           BIGINT   operating-system pid of the launching process
--   context       INTEGER  CUDA context id (NULL unless $context)
--   correlation_id BIGINT  CUPTI correlation id: with pid, it names the API call that
--                          launched the operation (launched_by in _shared.sql);
--                          tracelens.util_calls looks that call up for the operations that
--                          end an idle gap only (no join of every operation to its call)
SELECT
    w.deviceId::INTEGER AS device,
    w.start::BIGINT AS start_ns,
    w."end"::BIGINT AS end_ns,
    CASE w.kind WHEN 'kernel' THEN 0 WHEN 'memcpy' THEN 1 WHEN 'memset' THEN 2 ELSE 3
    END::TINYINT AS kind,
    w.name_id::BIGINT AS name_id,
    pid_of(w.globalPid)::BIGINT AS pid,
    CASE WHEN $context THEN w.contextId END::INTEGER AS context,
    w.correlationId::BIGINT AS correlation_id
FROM gpu_work($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS w
