-- nvtx_kernel_names: the text `nvtx --kernels` rows are named and ordered by
-- (tracelens.nvtx_kernels gathers it by gid and name_id into the rows of nvtx_kernel_stats,
-- 4M on the 5M-kernel benchmark, whose PyTorch labels are unique per op, rather than
-- sorting and handing over text row by row): each range group of nvtx_range_groups and
-- each kernel name of nvtx_kernel_stats, with its rank in sorted order. One row per gid
-- (name_id NULL), then one per name_id (gid NULL).
--
-- Columns:
--   gid         BIGINT   a range group (NULL in a kernel name's row)
--   range       VARCHAR  its range name, path or PyTorch op (NULL: unnamed range)
--   style       VARCHAR  'PushPop' | 'StartEnd'
--   range_rank  BIGINT   place of `range` among the groups' (NULL where range is NULL)
--   name_id     BIGINT   a kernel name's StringIds id (NULL in a group's row)
--   name        VARCHAR  the kernel name ('<unknown string id N>' when StringIds lacks it)
--   name_rank   BIGINT   place of `name` among the names'
SELECT DISTINCT gid, range, style, range_rank,
       NULL::BIGINT AS name_id, NULL::VARCHAR AS name, NULL::BIGINT AS name_rank
FROM nvtx_range_groups
UNION ALL
SELECT NULL, NULL, NULL, NULL, name_id, name, dense_rank() OVER (ORDER BY name)
FROM (
    SELECT k.name_id, string_or_id(s.value, k.name_id) AS name
    FROM (SELECT DISTINCT name_id FROM nvtx_kernel_stats WHERE name_id IS NOT NULL) AS k
    LEFT JOIN strings AS s ON s.id = k.name_id
)
ORDER BY gid NULLS LAST, name_id
