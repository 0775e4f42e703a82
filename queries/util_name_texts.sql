-- util_name_texts: the demangled names of the given kernel name ids, for classifying each
-- name once in Python (compute, communication or memory; the collective kind) before the
-- util sweeps. util takes the ids from the GPU operations it has read already
-- (work_in_order): util_kernel_names.sql, which finds them itself, scans the kernel table
-- once more (~0.6 CPU s on a 5M-kernel trace read directly).
--
-- Parameters:
--   $ids  BIGINT[]  StringIds ids (kernels.demangledName); duplicates and NULLs are ignored
--
-- Columns:
--   name_id  BIGINT   the id
--   name     VARCHAR  the demangled name ('<unknown string id N>' when StringIds lacks it)
WITH ids AS (SELECT DISTINCT unnest($ids::BIGINT[]) AS name_id)
SELECT ids.name_id, coalesce(s.value, '<unknown string id ' || ids.name_id || '>') AS name
FROM ids
LEFT JOIN strings AS s ON s.id = ids.name_id
WHERE ids.name_id IS NOT NULL
ORDER BY ids.name_id
