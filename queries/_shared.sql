-- _shared: the named helpers every query file uses, installed once per connection by the
-- loader (after the views). One definition each of: the pid/tid decode, the event filter
-- (device, pid, stream, time window with nsys's rule: an event ends at or after the
-- window's start and starts before its end), the filtered GPU work views, and what an
-- NVTX range is.
--
-- Scalar macros:
--   pid_of(global_id)   BIGINT  operating-system pid from a globalPid/globalTid (bits 24-47)
--   tid_of(global_tid)  BIGINT  operating-system tid from a globalTid (bits 0-23)
--   of_process(global_id, pid)  BOOLEAN  the globalPid/globalTid is of process pid (NULL: any)
--   in_window(s, e, t0, t1)     BOOLEAN  the event [s, e] is in the window [t0, t1) (ns): it
--                                        ends at or after t0 and starts before t1, as nsys's
--                                        filters (nsysstats' _CREATE_FILTERED_VIEW_QUERY:
--                                        starts in [t0, t1), ends in it, or spans it); an
--                                        event starting at t1 is out, one ending at t0 in. A
--                                        NULL bound is "no bound". tracelens.filters.in_window
--                                        is the same rule for Python-side filters
--   share_pct(part, whole)      DOUBLE   part / whole in %, rounded to 0.1; 0.0 for a whole of 0
--   ends_before_start(s, e)     BOOLEAN  a GPU record that ends before it starts: only a
--                                        damaged export holds one (a cut-off record with end
--                                        0, a wild timestamp); the filtered work views and
--                                        gpu_operations() leave such records out of every
--                                        figure, and Trace.damaged_work() counts them
--   event_passes(device_id, stream_id, global_pid, s, e, device, pid, stream, t0, t1)
--                               BOOLEAN  the event filter; each NULL filter value passes all
--   is_nvtx_range(event_type, e)         BOOLEAN  a closed push/pop or start/end range
--                                        (eventType 59, 60, and nsys's own 70, 71)
--   is_nvtx_range_type(event_type)       BOOLEAN  a push/pop or start/end range, closed or
--                                        left open (nvtx_ranges() keeps open ones)
--   is_nvtx_naming(event_type)           BOOLEAN  an NVTX event that names something
--                                        (category 33/64, thread 39, nvtxt meta 72-74,
--                                        domain create/destroy 75/76, CUDA device, context,
--                                        stream 97-99): stamped when the program made it,
--                                        possibly long before the capture; not activity
--   ends_on_own_thread(global_tid, end_global_tid)
--                               BOOLEAN  a range ended on the thread that opened it (or its
--                                        end thread is not recorded)
--   in_thread_chunk(global_tid, from_tid, to_tid, null_tid)
--                               BOOLEAN  from_tid <= global_tid < to_tid (a NULL bound is no
--                                        bound); a NULL global_tid is in when null_tid
--   api_name(name)      VARCHAR  a CUDA API function name as nsys prints it: without the
--                                version suffix ('cudaLaunchKernel_v7000' -> 'cudaLaunchKernel')
--   string_or_id(value, id)  VARCHAR  a StringIds value, or '<unknown string id N>' where
--                                the export's StringIds lacks id N (NULL for a NULL id)
--   launched_by(op_global_pid, op_correlation_id, call_global_tid, call_correlation_id)
--                               BOOLEAN  that runtime call launched that GPU operation (same
--                                        correlation id in the same process)
--   in_selection(global_pid, correlation_id, selection)
--                               BOOLEAN  the GPU operation is in work selection `selection`
--                                        (NULL: no selection, everything is in)
--
-- Table macros (the filter arguments as event_passes; every column of the view):
--   filtered_kernels(device, pid, stream, t0, t1, selection := NULL)
--   filtered_memcpys(device, pid, stream, t0, t1, selection := NULL)
--   filtered_memsets(device, pid, stream, t0, t1, selection := NULL)
--   filtered_graph_replays(device, pid, stream, t0, t1, selection := NULL)  (graph-level
--                         CUDA graph replays: GPU time whose kernels no other view lists)
--   gpu_work(device, pid, stream, t0, t1, selection := NULL)  all four as one table: kind,
--                         deviceId, contextId, streamId, globalPid, correlationId, start,
--                         "end", name_id (demangled kernel name id; NULL for the others)
--   mem_kind_name(kind)  VARCHAR  memory kind as nsys analyze prints it (Pageable, Pinned,
--                        Device, Array, Managed, Device Static, Managed Static, Unknown)
--   gpu_operations()   every GPU operation: kind ('kernel', 'memcpy', 'memset', 'graph' for a
--       CUDA graph replay traced at graph level), globalPid, correlationId, device, stream,
--       start, "end", name_id / short_id (kernels' demangledName / shortName, else NULL)
--   filtered_runtime_calls(pid, t0, t1, selection := NULL)   CUDA API calls; with a
--       selection, the calls that launched the selected work
-- `selection` names a set of GPU operations in the temp table work_selection (e.g. the work
-- launched inside matching NVTX ranges, or inside some steps), identified by the launching
-- process and correlation id; NULL keeps everything.
--
-- Statistics of nsys stats' summary reports (cuda_gpu_kern_sum, cuda_api_sum,
-- cuda_gpu_mem_time_sum, nvtx_sum; the same column block in each):
--   duration_stats(d)  STRUCT  an aggregate over one group's durations d, ns, unrounded:
--       total_ns (sum, HUGEINT), instances (rows), avg_ns, med_ns (median: the mean of the
--       middle two for an even count), min_ns, max_ns, stddev_ns (sample, n - 1; 0 for one)
--   nsys_stats(stats)  STRUCT  a duration_stats value as nsys prints it, in its column order:
--       time_pct (the row's share of the total_ns of all rows, %: a window over the whole
--       result; 0.0 when that total is 0: share_pct), total_ns BIGINT, instances, avg_ns,
--       med_ns, min_ns, max_ns, stddev_ns
--       (time_pct, avg, median and stddev rounded to 0.1)
-- A summary groups with duration_stats and selects unnest(nsys_stats(...)), renaming
-- instances where its report names them otherwise (calls, count).
--
-- Temp table work_selection (filled by the library, empty until then):
--   selection_id   BIGINT  which selection a row belongs to
--   globalPid      BIGINT  the GPU operation's globalPid
--   correlationId  BIGINT  its correlation id (unique per process)
-- Sequence work_selection_ids gives each new selection its id (tracelens.filters.select_work).
CREATE OR REPLACE TEMP MACRO pid_of(global_id) AS (global_id >> 24) & 16777215;
CREATE OR REPLACE TEMP MACRO tid_of(global_tid) AS global_tid & 16777215;
CREATE OR REPLACE TEMP MACRO of_process(global_id, pid) AS
    pid IS NULL OR pid_of(global_id) = pid;
CREATE OR REPLACE TEMP MACRO in_window(s, e, t0, t1) AS
    (t0 IS NULL OR e >= t0) AND (t1 IS NULL OR s < t1);
CREATE OR REPLACE TEMP MACRO ends_before_start(s, e) AS e < s;
CREATE OR REPLACE TEMP MACRO event_passes(device_id, stream_id, global_pid, s, e, device, pid, stream, t0, t1) AS
    (device IS NULL OR device_id = device)
    AND (stream IS NULL OR stream_id = stream)
    AND of_process(global_pid, pid)
    AND in_window(s, e, t0, t1);
-- launched_by: the runtime call (globalTid, correlationId) launched the GPU operation
-- (globalPid, correlationId). Correlation ids are unique per process only, so the process
-- must match too.
CREATE OR REPLACE TEMP MACRO launched_by(op_global_pid, op_correlation_id, call_global_tid, call_correlation_id) AS
    call_correlation_id = op_correlation_id AND pid_of(call_global_tid) = pid_of(op_global_pid);
CREATE OR REPLACE TEMP MACRO api_name(name) AS
    CASE WHEN length(name) >= 6 AND substr(name, length(name) - 5, 2) = '_v' THEN left(name, length(name) - 6) ELSE name END;
CREATE OR REPLACE TEMP MACRO string_or_id(value, id) AS
    coalesce(value, '<unknown string id ' || id || '>');
CREATE OR REPLACE TEMP MACRO is_nvtx_range_type(event_type) AS event_type IN (59, 60, 70, 71);
CREATE OR REPLACE TEMP MACRO is_nvtx_naming(event_type) AS
    event_type IN (33, 39, 64, 72, 73, 74, 75, 76, 97, 98, 99);
CREATE OR REPLACE TEMP MACRO is_nvtx_range(event_type, e) AS
    is_nvtx_range_type(event_type) AND e IS NOT NULL;
CREATE OR REPLACE TEMP MACRO ends_on_own_thread(global_tid, end_global_tid) AS
    end_global_tid IS NULL OR end_global_tid = global_tid;
CREATE OR REPLACE TEMP MACRO in_thread_chunk(global_tid, from_tid, to_tid, null_tid) AS
    CASE WHEN global_tid IS NULL THEN null_tid
         ELSE (from_tid IS NULL OR global_tid >= from_tid) AND (to_tid IS NULL OR global_tid < to_tid)
    END;
CREATE OR REPLACE TEMP MACRO duration_stats(d) AS {
    'total_ns': sum(d), 'instances': count(*), 'avg_ns': avg(d), 'med_ns': median(d),
    'min_ns': min(d), 'max_ns': max(d), 'stddev_ns': coalesce(stddev_samp(d), 0)};
-- share_pct(part, whole): part as a share of whole, %, rounded to 0.1; 0.0 when whole is 0
-- (GPU work of no duration at all: every format prints 0.0, as lineup, not NaN or empty)
CREATE OR REPLACE TEMP MACRO share_pct(part, whole) AS
    coalesce(round(part * 100.0 / nullif(whole, 0), 1), 0.0);
CREATE OR REPLACE TEMP MACRO nsys_stats(stats) AS {
    'time_pct': share_pct(stats.total_ns, sum(stats.total_ns) OVER ()),
    'total_ns': stats.total_ns::BIGINT, 'instances': stats.instances,
    'avg_ns': round(stats.avg_ns, 1), 'med_ns': round(stats.med_ns, 1),
    'min_ns': stats.min_ns, 'max_ns': stats.max_ns, 'stddev_ns': round(stats.stddev_ns, 1)};
-- name_matches(value, match, pattern, regex): a name matches a stakeout pattern, as each
-- stakeout query matches it: match 'exact' (value = pattern), 'contains', or else 'regex'
-- (RE2, regexp_matches).
CREATE OR REPLACE TEMP MACRO name_matches(value, match, pattern, regex) AS CASE match
    WHEN 'exact' THEN value = pattern
    WHEN 'contains' THEN contains(value, pattern)
    ELSE regexp_matches(value, regex)
END;
-- launch_spread(d, device_id, stream_id): the spread of some launches' durations (ns):
-- launches, total_ns, min_ns, p10/p50/p90/p99_ns (interpolated), max_ns, cv (stddev / mean;
-- 0 for one launch), devices and (device, stream) pairs run on; stakeout's summary.
CREATE OR REPLACE TEMP MACRO launch_spread(d, device_id, stream_id) AS {
    'launches': count(*), 'total_ns': sum(d)::BIGINT, 'min_ns': min(d)::DOUBLE,
    'p10_ns': quantile_cont(d, 0.1), 'p50_ns': quantile_cont(d, 0.5),
    'p90_ns': quantile_cont(d, 0.9), 'p99_ns': quantile_cont(d, 0.99),
    'max_ns': max(d)::DOUBLE, 'cv': coalesce(stddev_samp(d) / nullif(avg(d), 0), 0),
    'devices': count(DISTINCT device_id), 'streams': count(DISTINCT (device_id, stream_id))};
CREATE TEMP TABLE work_selection(selection_id BIGINT, globalPid BIGINT, correlationId BIGINT);
CREATE TEMP SEQUENCE work_selection_ids;
CREATE OR REPLACE TEMP MACRO in_selection(global_pid, correlation_id, selection) AS
    selection IS NULL OR (global_pid, correlation_id) IN (
        SELECT (w.globalPid, w.correlationId) FROM work_selection AS w
        WHERE w.selection_id = selection);
-- filtered_work(view, ...): the rows of the GPU work view named `view` (kernels, memcpys,
-- memsets, graph_replays) that pass the event filter and are in the selection; the four
-- named macros below are it for each view. Two branches, one of which a NULL or non-NULL
-- selection removes whole: with in_selection() in one WHERE, the planner joins
-- work_selection even for a NULL selection, and that join reads globalPid and
-- correlationId of every row (census of 5M kernels from SQLite: 1.5 vs 1.15 CPU s).
CREATE OR REPLACE TEMP MACRO filtered_work(view, device, pid, stream, t0, t1, selection := NULL) AS TABLE
    SELECT * FROM query_table(view)
    WHERE selection IS NULL
      AND event_passes(deviceId, streamId, globalPid, start, "end", device, pid, stream, t0, t1)
      AND NOT ends_before_start(start, "end")
    UNION ALL
    SELECT v.* FROM query_table(view) AS v
    SEMI JOIN work_selection AS w
        ON w.selection_id = selection AND w.globalPid = v.globalPid
        AND w.correlationId = v.correlationId
    WHERE selection IS NOT NULL
      AND event_passes(v.deviceId, v.streamId, v.globalPid, v.start, v."end", device, pid, stream, t0, t1)
      AND NOT ends_before_start(v.start, v."end");
CREATE OR REPLACE TEMP MACRO filtered_kernels(device, pid, stream, t0, t1, selection := NULL) AS TABLE
    SELECT * FROM filtered_work('kernels', device, pid, stream, t0, t1, selection := selection);
CREATE OR REPLACE TEMP MACRO filtered_memcpys(device, pid, stream, t0, t1, selection := NULL) AS TABLE
    SELECT * FROM filtered_work('memcpys', device, pid, stream, t0, t1, selection := selection);
CREATE OR REPLACE TEMP MACRO filtered_memsets(device, pid, stream, t0, t1, selection := NULL) AS TABLE
    SELECT * FROM filtered_work('memsets', device, pid, stream, t0, t1, selection := selection);
-- CUDA graph replays traced at graph level (their kernels are in no other view), filtered
-- as the GPU work views are; for analyses that count GPU busy time (util, findings).
CREATE OR REPLACE TEMP MACRO filtered_graph_replays(device, pid, stream, t0, t1, selection := NULL) AS TABLE
    SELECT * FROM filtered_work('graph_replays', device, pid, stream, t0, t1, selection := selection);
-- Every GPU operation that passes the filter, one row each: kernels, memcpys, memsets and
-- graph-level CUDA graph replays. Columns: kind ('kernel' | 'memcpy' | 'memset' | 'graph'),
-- deviceId, contextId, streamId, globalPid, correlationId, start, "end" (ns), name_id (the
-- kernel's demangled-name StringIds id; NULL for the other kinds).
CREATE OR REPLACE TEMP MACRO gpu_work(device, pid, stream, t0, t1, selection := NULL) AS TABLE
    SELECT 'kernel' AS kind, deviceId, contextId, streamId, globalPid, correlationId, start,
           "end", demangledName AS name_id
    FROM filtered_kernels(device, pid, stream, t0, t1, selection := selection)
    UNION ALL
    SELECT 'memcpy', deviceId, contextId, streamId, globalPid, correlationId, start, "end", NULL
    FROM filtered_memcpys(device, pid, stream, t0, t1, selection := selection)
    UNION ALL
    SELECT 'memset', deviceId, contextId, streamId, globalPid, correlationId, start, "end", NULL
    FROM filtered_memsets(device, pid, stream, t0, t1, selection := selection)
    UNION ALL
    SELECT 'graph', deviceId, contextId, streamId, globalPid, correlationId, start, "end", NULL
    FROM filtered_graph_replays(device, pid, stream, t0, t1, selection := selection);
-- Memory kind names as `nsys analyze` prints them (CUPTI memory kinds 0-7).
CREATE OR REPLACE TEMP MACRO mem_kind_name(kind) AS
    CASE kind WHEN 0 THEN 'Pageable' WHEN 1 THEN 'Pinned' WHEN 2 THEN 'Device'
              WHEN 3 THEN 'Array' WHEN 4 THEN 'Managed' WHEN 5 THEN 'Device Static'
              WHEN 6 THEN 'Managed Static' WHEN 7 THEN 'Unknown' END;
-- filtered_runtime_calls: two branches as filtered_work, for the same reason (a NULL
-- selection's mark join read globalTid and correlationId of every call: the diff's
-- trace_totals on 1M calls ~0.2 vs ~0.1 CPU s).
CREATE OR REPLACE TEMP MACRO filtered_runtime_calls(pid, t0, t1, selection := NULL) AS TABLE
    SELECT * FROM runtime_calls
    WHERE selection IS NULL
      AND of_process(globalTid, pid)
      AND in_window(start, "end", t0, t1)
    UNION ALL
    SELECT r.* FROM runtime_calls AS r
    SEMI JOIN work_selection AS w
        ON w.selection_id = selection AND w.globalPid = r.globalTid - tid_of(r.globalTid)
        AND w.correlationId = r.correlationId
    WHERE selection IS NOT NULL
      AND of_process(r.globalTid, pid)
      AND in_window(r.start, r."end", t0, t1);
-- calls_in_ranges(ranges): the CUDA API calls that start inside a range of the relation
-- named `ranges` (a table or a CTE of the calling query, with columns start, "end" and
-- globalTid), on the range's thread. Meant for ranges that do not nest (steps): a call
-- goes to the latest range of its thread that starts at or before it, if that range has not
-- ended by then. Columns: correlationId, pid (the call's process), every column of the range.
CREATE OR REPLACE TEMP MACRO calls_in_ranges(ranges) AS TABLE
    SELECT r.correlationId, pid_of(r.globalTid) AS pid, g.*
    FROM runtime_calls AS r
    ASOF JOIN query_table(ranges) AS g ON g.globalTid = r.globalTid AND g.start <= r.start
    WHERE r.start <= g."end";
-- work_span(view): one row over the GPU work view named `view` (kernels, memcpys, memsets):
-- events (rows), first_ns (earliest start), last_ns (latest end), pids (the distinct
-- processes, a list in no order; NULL when none). One pass over the view.
CREATE OR REPLACE TEMP MACRO work_span(view) AS TABLE
    SELECT count(*) AS events, min(start) AS first_ns, max("end") AS last_ns,
           list(DISTINCT pid_of(globalPid)) FILTER (WHERE globalPid IS NOT NULL) AS pids
    FROM query_table(view);
CREATE OR REPLACE TEMP MACRO gpu_operations() AS TABLE
    SELECT 'kernel' AS kind, globalPid, correlationId, deviceId AS device, streamId AS stream,
           start, "end", demangledName AS name_id, shortName AS short_id
    FROM kernels WHERE NOT ends_before_start(start, "end")
    UNION ALL
    SELECT 'memcpy', globalPid, correlationId, deviceId, streamId, start, "end", NULL, NULL
    FROM memcpys WHERE NOT ends_before_start(start, "end")
    UNION ALL
    SELECT 'memset', globalPid, correlationId, deviceId, streamId, start, "end", NULL, NULL
    FROM memsets WHERE NOT ends_before_start(start, "end")
    UNION ALL
    SELECT 'graph', globalPid, correlationId, deviceId, streamId, start, "end", NULL, NULL
    FROM graph_replays WHERE NOT ends_before_start(start, "end");
