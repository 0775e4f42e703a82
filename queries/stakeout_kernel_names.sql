-- stakeout_kernel_names: the demangled names of some kernels, by their StringIds ids: what
-- stakeout's kernels table shows beside the short names when several kernels share one
-- (a few rows: the distinct kernels a pattern matched).
--
-- Parameters:
--   $ids  BIGINT[]  StringIds ids (stakeout_launches.sql's kernel_id)
--
-- Columns:
--   kernel_id  BIGINT   the id
--   kernel     VARCHAR  its text (the demangled name; '<unknown string id N>' when absent)
SELECT i.kernel_id, string_or_id(s.value, i.kernel_id) AS kernel
FROM (SELECT unnest($ids) AS kernel_id) AS i
LEFT JOIN strings AS s ON s.id = i.kernel_id
ORDER BY i.kernel_id
