-- trace_totals: the copies and memsets of one trace, for comparing two runs. One row.
-- compare.collect.trace_totals adds the other headline figures: the kernels' (launches,
-- distinct kernels, kernel time, their span and the time at least one kernel ran) from the
-- kernels it reads in launch order anyway (a framed window for the busy time cost ~0.4 CPU
-- s per million kernels, and a kernel scan for the rest about a census), and the API calls'
-- from runtime_totals.sql, or from the trace's event counts when nothing is filtered.
-- Parameters: $start_ns, $end_ns BIGINT or NULL: time window (nsys rule: keep events that
--   start in, end in or span it), applied to every kind of event.
--   $selection BIGINT or NULL: a work_selection id (--nvtx, --step): only the work in it.
-- Columns:
--   memcpy_count      BIGINT  memory copies
--   memcpy_bytes      BIGINT  bytes copied
--   memcpy_time_ns    BIGINT  sum of copy durations, ns
--   memset_count      BIGINT  memsets
--   memset_bytes      BIGINT  bytes set
--   first_ns, last_ns BIGINT  earliest start and latest end of copies and memsets, ns from
--                             session start (NULL when there are none)
-- One aggregate pass per table (their spans combined after), not a scan per figure.
WITH c AS (
    SELECT count(*) AS n, coalesce(sum(bytes), 0)::BIGINT AS bytes,
           coalesce(sum("end" - start), 0)::BIGINT AS time_ns, min(start) AS first_ns,
           max("end") AS last_ns
    FROM filtered_memcpys(NULL, NULL, NULL, $start_ns, $end_ns, selection := $selection)
),
s AS (
    SELECT count(*) AS n, coalesce(sum(bytes), 0)::BIGINT AS bytes, min(start) AS first_ns,
           max("end") AS last_ns
    FROM filtered_memsets(NULL, NULL, NULL, $start_ns, $end_ns, selection := $selection)
),
-- least/greatest skip NULLs: a table without events in the window does not count
span AS (
    SELECT least(c.first_ns, s.first_ns) AS first_ns,
           greatest(c.last_ns, s.last_ns) AS last_ns
    FROM c, s
)
SELECT
    c.n AS memcpy_count,
    c.bytes AS memcpy_bytes,
    c.time_ns AS memcpy_time_ns,
    s.n AS memset_count,
    s.bytes AS memset_bytes,
    span.first_ns,
    span.last_ns
FROM c, s, span
