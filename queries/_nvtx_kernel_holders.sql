-- _nvtx_kernel_holders: creates the temp table nvtx_kernel_holders: for each NVTX range that
-- is the innermost range of some kernel's launching call (nvtx_op_ranges; threads whose
-- ranges overlap are left out, their kernels' holders are nvtx_overlap_holders), every
-- range holding those kernels, itself and its ancestors (nvtx_tree's parent links,
-- followed up one level per step), with its group. One row per (innermost range, holder):
-- tracelens.nvtx_kernels joins the kernels to it on range_id, so no kernel is compared
-- with a range. Needs nvtx_op_ranges, nvtx_tree, nvtx_paths, nvtx_overlap_calls and
-- nvtx_range_groups.
--
-- Columns of nvtx_kernel_holders:
--   range_id    BIGINT   the innermost range (nsys's RangeId)
--   holder_id   BIGINT   a range holding it (itself included)
--   gid         BIGINT   the holder's group (nvtx_range_groups)
--   first       BOOLEAN  the holder is the innermost of its group here: a kernel held by
--                        two ranges of one group (same-named nested ranges) counts once
CREATE OR REPLACE TEMP TABLE nvtx_kernel_holders AS
WITH RECURSIVE
links AS MATERIALIZED (
    SELECT t.range_id, t.parent_id
    FROM nvtx_paths AS p
    JOIN nvtx_tree AS t ON t.range_id = p.range_id
),
innermost AS (
    SELECT DISTINCT range_id
    FROM nvtx_op_ranges
    WHERE kind = 'kernel' AND range_id IS NOT NULL
      AND global_tid NOT IN (SELECT global_tid FROM nvtx_overlap_calls)
),
up AS (
    SELECT range_id, range_id AS holder_id FROM innermost
    UNION ALL
    SELECT u.range_id, l.parent_id
    FROM up AS u
    JOIN links AS l ON l.range_id = u.holder_id
    WHERE l.parent_id IS NOT NULL
)
SELECT u.range_id, u.holder_id, g.gid,
       row_number() OVER (PARTITION BY u.range_id, g.gid ORDER BY u.holder_id) = 1 AS first
FROM up AS u
JOIN nvtx_range_groups AS g ON g.range_id = u.holder_id
