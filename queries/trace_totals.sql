-- trace_totals: the headline figures of one trace besides its kernels, for comparing two
-- runs. One row. The kernel figures (launches, distinct kernels, kernel time, their span and
-- the time at least one kernel ran) are not here: compare.collect.trace_totals takes them
-- from the kernels it reads in launch order anyway (a framed window for the busy time cost
-- ~0.4 CPU s per million kernels, and the kernel scan for the rest about a census).
-- Parameters: $start_ns, $end_ns BIGINT or NULL: time window (nsys rule: keep events that
--   start in, end in or span it), applied to every kind of event.
--   $selection BIGINT or NULL: a work_selection id (--nvtx, --step): only the GPU work in
--   it, and only the API calls that launched it.
--   $runtime BOOLEAN: read the CUDA API calls; false when the caller has their figures
--   from its own read of them (the diff: util's, util_calls.sql) and takes them itself
--   (DuckDB then skips the scan, ~0.12 CPU s per million calls): runtime_calls is 0 and
--   the calls are left out of first_ns and last_ns.
-- Columns:
--   memcpy_count      BIGINT  memory copies
--   memcpy_bytes      BIGINT  bytes copied
--   memcpy_time_ns    BIGINT  sum of copy durations, ns
--   memset_count      BIGINT  memsets
--   memset_bytes      BIGINT  bytes set
--   runtime_calls     BIGINT  CUDA runtime/driver API calls
--   first_ns, last_ns BIGINT  earliest start and latest end of copies, memsets and API
--                             calls, ns from session start (NULL when there are none)
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
r AS (
    SELECT count(*) AS n, min(start) AS first_ns, max("end") AS last_ns
    FROM filtered_runtime_calls(NULL, $start_ns, $end_ns, selection := $selection)
    WHERE $runtime
),
-- least/greatest skip NULLs: a table without events in the window does not count
span AS (
    SELECT least(c.first_ns, s.first_ns, r.first_ns) AS first_ns,
           greatest(c.last_ns, s.last_ns, r.last_ns) AS last_ns
    FROM c, s, r
)
SELECT
    c.n AS memcpy_count,
    c.bytes AS memcpy_bytes,
    c.time_ns AS memcpy_time_ns,
    s.n AS memset_count,
    s.bytes AS memset_bytes,
    r.n AS runtime_calls,
    span.first_ns,
    span.last_ns
FROM c, s, r, span
