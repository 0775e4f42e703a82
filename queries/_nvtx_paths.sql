-- _nvtx_paths: creates the temp table nvtx_paths: the NVTX ranges that hold GPU work
-- (nvtx_held) with their names, stacks and paths, built from the roots down along
-- the parent links nvtx_held has from nvtx_tree, one string per range. Needs nvtx_held and
-- nvtx_held_text, their labels (tracelens.nvtx builds them).
--
-- Columns of nvtx_paths:
--   range_id    BIGINT   nsys's RangeId (NVTX_EVENTS rowid)
--   name        VARCHAR  nsys's range name ('domain:label' in a named domain)
--   style       VARCHAR  'PushPop' | 'StartEnd'
--   stack       VARCHAR  ':1:3:4', the RangeIds from the top down (nsys's RangeStack)
--   path        VARCHAR  the range names from the top down, joined by ' / '
CREATE OR REPLACE TEMP TABLE nvtx_paths AS
WITH RECURSIVE
held AS MATERIALIZED (
    SELECT u.range_id, u.parent_id, r.name, r.style
    FROM nvtx_held AS u
    JOIN nvtx_ranges(source := 'nvtx_held_text') AS r ON r.range_id = u.range_id
),
down AS (
    SELECT range_id, ':' || range_id AS stack, name AS path
    FROM held
    WHERE parent_id IS NULL
    UNION ALL
    SELECT h.range_id, d.stack || ':' || h.range_id, d.path || ' / ' || coalesce(h.name, '')
    FROM down AS d
    JOIN held AS h ON h.parent_id = d.range_id
)
SELECT h.range_id, h.name, h.style, d.stack, d.path
FROM held AS h
JOIN down AS d ON d.range_id = h.range_id
