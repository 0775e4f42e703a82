-- kernel_name_pairs: which demangled kernel carries the most time under each short name
-- (a short name such as "reduce_kernel" covers many template instances), so that a diff
-- shown by short name still sorts kernels into categories by their demangled names. From
-- the GPU work the diff has already read (work_in_order.sql's rows, registered as $work): it
-- reads no table of the trace.
-- Parameters:
--   $work  VARCHAR  name of the registered relation with work_in_order.sql's columns (kind,
--                   start_ns, end_ns, name_id, short_id; kind 0 are kernels), already
--                   filtered
-- Columns:
--   short      VARCHAR  short kernel name
--   demangled  VARCHAR  the demangled name with the largest total time under it (ties:
--                       the smallest name)
WITH pairs AS (
    SELECT short_id, name_id, sum(end_ns - start_ns) AS total_ns
    FROM query_table($work)
    WHERE kind = 0
    GROUP BY short_id, name_id
),
ranked AS (
    SELECT s.value AS short, d.value AS demangled,
           row_number() OVER (PARTITION BY pairs.short_id
                              ORDER BY pairs.total_ns DESC, d.value) AS rank
    FROM pairs
    JOIN strings AS s ON s.id = pairs.short_id
    JOIN strings AS d ON d.id = pairs.name_id
)
SELECT short, demangled FROM ranked WHERE rank = 1 ORDER BY short
