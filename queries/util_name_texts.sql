-- util_name_texts: the demangled names of the given kernel name ids, for classifying each
-- name once in Python (compute, communication or memory; the collective kind) before the
-- util sweeps. util takes the ids from the GPU operations it has read already
-- (work_in_order): util_kernel_names.sql, which finds them itself, scans the kernel table
-- once more (~0.6 CPU s on a 5M-kernel trace read directly).
--
-- Parameters:
--   $ids  VARCHAR  StringIds ids (kernels.demangledName), comma-separated; duplicates and
--     empty items are ignored. Text, not a BIGINT[]: DuckDB's Python client binds a list
--     item by item, trying to import pandas for each (~4 failed imports, ~0.1 ms apiece;
--     300 kernel names cost ~0.05 CPU s), a string at once
--
-- Columns:
--   name_id  BIGINT   the id
--   name     VARCHAR  the demangled name ('<unknown string id N>' when StringIds lacks it)
WITH ids AS (SELECT DISTINCT TRY_CAST(unnest(string_split($ids, ',')) AS BIGINT) AS name_id)
SELECT ids.name_id, string_or_id(s.value, ids.name_id) AS name
FROM ids
LEFT JOIN strings AS s ON s.id = ids.name_id
WHERE ids.name_id IS NOT NULL
ORDER BY ids.name_id
