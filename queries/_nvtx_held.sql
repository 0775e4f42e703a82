-- _nvtx_held: creates the temp table nvtx_held, the NVTX ranges that hold GPU work: the
-- innermost range of some operation's launching call (nvtx_range_ops), a range holding a
-- call on a thread whose ranges overlap (nvtx_overlap_holders), and every ancestor of one.
-- Only these get labels, stacks and paths (_nvtx_paths): of ten million ranges, those that
-- launched work may be few. Needs nvtx_tree and nvtx_held_ids, those ranges' ids
-- (tracelens.nvtx_sweep.register_held follows the parent links up from
-- _nvtx_held_seeds.sql's ranges; a recursive join here built its hash table over the
-- 10M-range fixture's whole tree at each level, 0.5 GB at the run's peak).
--
-- Columns of nvtx_held (the ranges' nvtx_tree rows, so that the steps after join these
-- rather than the whole tree: on the 10M-range fixture, 2M held of 10M, the projection's
-- summary peaked 0.1 GB lower and took 3.6 CPU s, not 4.9):
--   range_id    BIGINT   nsys's RangeId (NVTX_EVENTS rowid)
--   parent_id   BIGINT   RangeId of the enclosing range, NULL at the top
--   global_tid  BIGINT   thread
--   start, "end" BIGINT  range start and end, ns from session start
--   level       INTEGER  nesting level, 0 at the top
CREATE OR REPLACE TEMP TABLE nvtx_held AS
SELECT t.range_id::BIGINT AS range_id, t.parent_id::BIGINT AS parent_id, t.global_tid,
       t.start, t."end", t.level
FROM nvtx_tree AS t
SEMI JOIN nvtx_held_ids AS h ON h.range_id = t.range_id
