-- nvtx_kernel_names: the text nvtx_kernel_summary's rows are named with (by gid and name_id,
-- in tracelens.nvtx_kernels): each range group of nvtx_range_groups and each kernel name
-- of nvtx_kernel_stats. One row per gid (name_id NULL), then one per name_id (gid NULL).
--
-- Columns:
--   gid      BIGINT   a range group (NULL in a kernel name's row)
--   range    VARCHAR  its range name, path or PyTorch op (NULL: unnamed range)
--   style    VARCHAR  'PushPop' | 'StartEnd'
--   name_id  BIGINT   a kernel name's StringIds id (NULL in a group's row)
--   name     VARCHAR  the kernel name ('<unknown string id N>' when StringIds lacks it)
SELECT DISTINCT gid, range, style, NULL::BIGINT AS name_id, NULL::VARCHAR AS name
FROM nvtx_range_groups
UNION ALL
SELECT NULL, NULL, NULL, k.name_id,
       coalesce(s.value, '<unknown string id ' || k.name_id || '>')
FROM (SELECT DISTINCT name_id FROM nvtx_kernel_stats WHERE name_id IS NOT NULL) AS k
LEFT JOIN strings AS s ON s.id = k.name_id
ORDER BY gid NULLS LAST, name_id
