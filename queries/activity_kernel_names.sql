-- activity_kernel_names: every distinct kernel name id of the trace with its text, for
-- classifying names once in Python (activity_bins colors kernels by category).
-- Parameters: $name_kind VARCHAR 'demangled' | 'short'
-- Columns:
--   name_id  BIGINT   StringIds id
--   name     VARCHAR  the kernel name
WITH ids AS (
    SELECT DISTINCT CASE $name_kind WHEN 'short' THEN shortName ELSE demangledName END AS name_id
    FROM kernels
)
SELECT ids.name_id, coalesce(s.value, '<unknown string id ' || ids.name_id || '>') AS name
FROM ids
LEFT JOIN strings AS s ON s.id = ids.name_id
ORDER BY ids.name_id
