-- trace_totals: the headline figures of one trace, for comparing two runs. One row. The time
-- at least one kernel ran (gpu_busy_ns) is not here: compare.collect.trace_totals sweeps the
-- kernels it reads in launch order anyway (a framed window here cost ~0.4 CPU s per million
-- kernels, most of this query).
-- Parameters: $start_ns, $end_ns BIGINT or NULL: time window (nsys rule: keep events that
--   start in, end in or span it), applied to every kind of event.
--   $selection BIGINT or NULL: a work_selection id (--nvtx, --step): only the GPU work in
--   it, and only the API calls that launched it.
-- Columns:
--   kernel_launches   BIGINT  kernels launched
--   distinct_kernels  BIGINT  distinct demangled kernel names
--   kernel_time_ns    BIGINT  sum of kernel durations (overlapping kernels count twice), ns
--   memcpy_count      BIGINT  memory copies
--   memcpy_bytes      BIGINT  bytes copied
--   memcpy_time_ns    BIGINT  sum of copy durations, ns
--   memset_count      BIGINT  memsets
--   memset_bytes      BIGINT  bytes set
--   runtime_calls     BIGINT  CUDA runtime/driver API calls
--   first_ns, last_ns BIGINT  earliest start and latest end of kernels, copies, memsets
--                             and API calls, ns from session start
--   span_ns           BIGINT  last_ns - first_ns, ns
-- One aggregate pass per table (their spans combined after), not a scan per figure.
WITH k AS (
    SELECT count(*) AS n, count(DISTINCT demangledName) AS names,
           coalesce(sum("end" - start), 0)::BIGINT AS time_ns, min(start) AS first_ns,
           max("end") AS last_ns
    FROM filtered_kernels(NULL, NULL, NULL, $start_ns, $end_ns, selection := $selection)
),
c AS (
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
),
-- least/greatest skip NULLs: a table without events in the window does not count
span AS (
    SELECT least(k.first_ns, c.first_ns, s.first_ns, r.first_ns) AS first_ns,
           greatest(k.last_ns, c.last_ns, s.last_ns, r.last_ns) AS last_ns
    FROM k, c, s, r
)
SELECT
    k.n AS kernel_launches,
    k.names AS distinct_kernels,
    k.time_ns AS kernel_time_ns,
    c.n AS memcpy_count,
    c.bytes AS memcpy_bytes,
    c.time_ns AS memcpy_time_ns,
    s.n AS memset_count,
    s.bytes AS memset_bytes,
    r.n AS runtime_calls,
    span.first_ns,
    span.last_ns,
    span.last_ns - span.first_ns AS span_ns
FROM k, c, s, r, span
