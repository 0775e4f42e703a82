-- kernel_name_pairs: which demangled kernel carries the most time under each short name
-- (a short name such as "reduce_kernel" covers many template instances), so that a diff
-- shown by short name still sorts kernels into categories by their demangled names.
-- Parameters:
--   $start_ns, $end_ns  BIGINT or NULL (time window, nsys rule)
--   $selection          BIGINT or NULL: a work_selection id (--nvtx, --step)
-- Columns:
--   short      VARCHAR  short kernel name
--   demangled  VARCHAR  the demangled name with the largest total time under it (ties:
--                       the smallest name)
WITH pairs AS (
    SELECT shortName, demangledName, sum("end" - start) AS total_ns
    FROM filtered_kernels(NULL, NULL, NULL, $start_ns, $end_ns, selection := $selection)
    GROUP BY shortName, demangledName
),
ranked AS (
    SELECT s.value AS short, d.value AS demangled,
           row_number() OVER (PARTITION BY pairs.shortName
                              ORDER BY pairs.total_ns DESC, d.value) AS rank
    FROM pairs
    JOIN strings AS s ON s.id = pairs.shortName
    JOIN strings AS d ON d.id = pairs.demangledName
)
SELECT short, demangled FROM ranked WHERE rank = 1 ORDER BY short
