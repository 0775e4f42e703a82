-- activity_kernel_names: every distinct kernel name id of the trace with its text, for
-- classifying names once in Python (activity_bins colors kernels by category).
-- Parameters:
--   $name_kind  VARCHAR  'demangled' | 'short'
--   $work       VARCHAR  'trace' (the trace's kernels view) or the name of a relation
--                        with work_in_order.sql's columns (kind, name_id, short_id) that
--                        the caller registered (activity_bins.sql says why)
-- Columns:
--   name_id  BIGINT   StringIds id
--   name     VARCHAR  the kernel name
WITH trace_kernels AS (
    SELECT 0::TINYINT AS kind, demangledName AS name_id, shortName AS short_id FROM kernels
),
ids AS (
    SELECT DISTINCT CASE $name_kind WHEN 'short' THEN short_id ELSE name_id END AS name_id
    FROM query_table(CASE $work WHEN 'trace' THEN 'trace_kernels' ELSE $work END)
    WHERE kind = 0
)
SELECT ids.name_id, string_or_id(s.value, ids.name_id) AS name
FROM ids
LEFT JOIN strings AS s ON s.id = ids.name_id
ORDER BY ids.name_id
