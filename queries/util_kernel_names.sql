-- util_kernel_names: every distinct demangled kernel name of the trace, for classifying each
-- name once in Python (compute, communication or memory; the collective of a communication
-- kernel) before the util sweeps. No parameters.
-- Columns:
--   name_id  BIGINT   StringIds id of the demangled name (kernels.demangledName)
--   name     VARCHAR  the demangled name
WITH ids AS (SELECT DISTINCT demangledName AS name_id FROM kernels)
SELECT ids.name_id, string_or_id(s.value, ids.name_id) AS name
FROM ids
LEFT JOIN strings AS s ON s.id = ids.name_id
ORDER BY ids.name_id
