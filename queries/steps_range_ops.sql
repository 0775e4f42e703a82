-- steps_range_ops: the GPU operations that pass the filter, with what tracelens.steps_ranges
-- needs to put each in its step (or its family of top-level ranges) when it was launched
-- from a thread that has such ranges: its launching API call's thread (as a position in
-- $tids) and start; NULL for the others, which count only in the family search's total.
-- The operation joins its call on one BIGINT key, the pid above CUPTI's 32-bit
-- correlation id (as util_work), the same pairs launched_by() matches; the step of each
-- call is then found in polars by a binary search in steps_range_marks (steps_by_range
-- did both in DuckDB: an ASOF join of every API call, a two-key hash join and a framed
-- window for the busy time, 11 CPU s of the 5M-kernel trace with 2,076 steps).
--
-- Parameters:
--   $tids  VARCHAR  the threads that have steps (distinct globalTids), a JSON list
--                   (tracelens.trace.list_param, read with bigint_list)
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter
--
-- Columns (in no particular order):
--   device     BIGINT   CUDA device ordinal
--   start      BIGINT   operation start, ns from session start
--   end        BIGINT   operation end, ns
--   is_kernel  BOOLEAN  a kernel (else a memcpy, memset or graph replay)
--   thread     INTEGER  1-based position of the launching call's thread in $tids (NULL:
--                       not launched from one of them)
--   call_key   BIGINT   the launching call's start * 3 + 1 (see steps_range_marks; NULL
--                       with thread)
--   name_id    BIGINT   a kernel's demangled-name StringIds id (NULL for the others): the
--                       per-step kernel totals the top kernels are ranked from
WITH calls AS (
    SELECT (pid_of(globalTid) << 32) | correlationId AS launch,
           list_position(bigint_list($tids), globalTid)::INTEGER AS thread, start
    FROM runtime_calls
    WHERE list_contains(bigint_list($tids), globalTid)
)
SELECT w.deviceId AS device, w.start, w."end", w.kind = 'kernel' AS is_kernel, c.thread,
       c.start * 3 + 1 AS call_key, w.name_id
FROM gpu_work($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS w
LEFT JOIN calls AS c ON c.launch = (pid_of(w.globalPid) << 32) | w.correlationId
