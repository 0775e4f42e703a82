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
WITH k AS (
    SELECT deviceId, start, "end", demangledName
    FROM filtered_kernels(NULL, NULL, NULL, $start_ns, $end_ns, selection := $selection)
),
c AS (
    SELECT * FROM filtered_memcpys(NULL, NULL, NULL, $start_ns, $end_ns, selection := $selection)
),
s AS (
    SELECT * FROM filtered_memsets(NULL, NULL, NULL, $start_ns, $end_ns, selection := $selection)
),
r AS (
    SELECT * FROM filtered_runtime_calls(NULL, $start_ns, $end_ns, selection := $selection)
),
span AS (
    SELECT min(start) AS first_ns, max("end") AS last_ns FROM (
        SELECT start, "end" FROM k UNION ALL SELECT start, "end" FROM c
        UNION ALL SELECT start, "end" FROM s UNION ALL SELECT start, "end" FROM r
    )
)
SELECT
    (SELECT count(*) FROM k) AS kernel_launches,
    (SELECT count(DISTINCT demangledName) FROM k) AS distinct_kernels,
    (SELECT coalesce(sum("end" - start), 0) FROM k)::BIGINT AS kernel_time_ns,
    (SELECT count(*) FROM c) AS memcpy_count,
    (SELECT coalesce(sum(bytes), 0) FROM c)::BIGINT AS memcpy_bytes,
    (SELECT coalesce(sum("end" - start), 0) FROM c)::BIGINT AS memcpy_time_ns,
    (SELECT count(*) FROM s) AS memset_count,
    (SELECT coalesce(sum(bytes), 0) FROM s)::BIGINT AS memset_bytes,
    (SELECT count(*) FROM r) AS runtime_calls,
    span.first_ns,
    span.last_ns,
    span.last_ns - span.first_ns AS span_ns
FROM span
