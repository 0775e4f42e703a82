-- _nvtx_range_groups: creates the temp table nvtx_range_groups: every NVTX range that holds
-- GPU work (nvtx_paths) with the group it counts in for `nvtx --kernels`, numbered so that
-- tracelens.nvtx_kernels can aggregate by one integer and nvtx_kernel_summary can sort by
-- the group's rank rather than by its string, row by row. Needs nvtx_paths and
-- nvtx_group (queries/_nvtx_ranges.sql).
--
-- Parameters:
--   $group_by  VARCHAR  'name' | 'path' | 'torch' (see nvtx_gpu_projection_summary)
--
-- Columns of nvtx_range_groups:
--   range_id    BIGINT   nsys's RangeId
--   gid         BIGINT   its group: one number per (range, style)
--   range       VARCHAR  the group: range name, path or PyTorch op (NULL: unnamed range)
--   style       VARCHAR  'PushPop' | 'StartEnd'
--   range_rank  BIGINT   place of `range` in sorted order (NULL where range is NULL)
CREATE OR REPLACE TEMP TABLE nvtx_range_groups AS
WITH grouped AS (
    SELECT range_id, style, nvtx_group($group_by, name, path) AS range
    FROM nvtx_paths
)
SELECT range_id,
       dense_rank() OVER (ORDER BY range, style) AS gid,
       range, style,
       CASE WHEN range IS NOT NULL THEN dense_rank() OVER (ORDER BY range) END AS range_rank
FROM grouped
