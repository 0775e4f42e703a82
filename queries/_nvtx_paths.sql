-- _nvtx_paths: creates the temp table nvtx_paths: the NVTX ranges that hold GPU work
-- (nvtx_held) with their names, stacks and paths, from nvtx_path_rows, which tracelens.nvtx
-- registers: _nvtx_held_names's ranges with each one's stack and path built from the roots
-- down, one level of parent links at a time (a recursive join here, over the 10M-range
-- fixture's 2M held ranges, held 0.4 GB more at the run's peak).
--
-- Columns of nvtx_paths:
--   range_id    BIGINT   nsys's RangeId (NVTX_EVENTS rowid)
--   name        VARCHAR  nsys's range name ('domain:label' in a named domain)
--   style       VARCHAR  'PushPop' | 'StartEnd'
--   stack       VARCHAR  ':1:3:4', the RangeIds from the top down (nsys's RangeStack)
--   path        VARCHAR  the range names from the top down, joined by ' / '
CREATE OR REPLACE TEMP TABLE nvtx_paths AS
SELECT range_id, name, style, stack, path
FROM nvtx_path_rows
