-- _nvtx_tree_links: each NVTX range's parent (nvtx_tree), for the ranges that have one:
-- what tracelens.nvtx_sweep.register_held follows up from the ranges that hold GPU work.
--
-- Columns (nvtx_tree's types: UINTEGER when every RangeId fits, else BIGINT):
--   range_id   UINTEGER  nsys's RangeId (NVTX_EVENTS rowid)
--   parent_id  UINTEGER  RangeId of the enclosing range
SELECT range_id, parent_id FROM nvtx_tree WHERE parent_id IS NOT NULL
