-- launch_names: the kernel names that work_in_order's name_id (short_id) refers to, one row
-- per name id (the diff's launch sequences).
-- Parameters:
--   $name_kind          VARCHAR  'short' | 'demangled'
--   $start_ns, $end_ns  BIGINT or NULL (time window, nsys rule)
--   $selection          BIGINT or NULL: a work_selection id (--nvtx, --step)
-- Columns:
--   name_id   BIGINT   StringIds id of the kernel name of the requested kind
--   name      VARCHAR  the name
WITH ids AS (
    SELECT DISTINCT CASE $name_kind WHEN 'short' THEN shortName ELSE demangledName END AS name_id
    FROM filtered_kernels(NULL, NULL, NULL, $start_ns, $end_ns, selection := $selection)
)
SELECT ids.name_id, coalesce(s.value, '<unknown string id ' || ids.name_id || '>') AS name
FROM ids LEFT JOIN strings AS s ON s.id = ids.name_id
ORDER BY ids.name_id
