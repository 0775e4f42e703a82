-- runtime_totals: how many CUDA runtime/driver API calls one trace holds and when they start
-- and end (compare.collect.trace_totals: the headline figures of a diff). One row.
-- Parameters: $start_ns, $end_ns BIGINT or NULL: time window (nsys rule: keep calls that
--   start in, end in or span it).
--   $selection BIGINT or NULL: a work_selection id (--nvtx, --step): only the calls that
--   launched the work in it.
-- Columns:
--   runtime_calls  BIGINT  API calls
--   first_ns       BIGINT  earliest start, ns from session start (NULL when there are none)
--   last_ns        BIGINT  latest end, ns (NULL when there are none)
SELECT count(*) AS runtime_calls, min(start) AS first_ns, max("end") AS last_ns
FROM filtered_runtime_calls(NULL, $start_ns, $end_ns, selection := $selection)
