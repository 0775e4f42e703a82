-- _nvtx_held_seeds: the NVTX ranges that hold GPU work themselves, not through a
-- descendant: the innermost range of some operation's launching call (nvtx_range_ops, which
-- tracelens.nvtx_sweep registers) and every range holding a call on a thread whose ranges
-- overlap (nvtx_overlap_holders). tracelens.nvtx_sweep.register_held adds their ancestors.
--
-- Columns:
--   range_id  BIGINT  nsys's RangeId (NVTX_EVENTS rowid), each once, in order
SELECT range_id FROM nvtx_range_ops
UNION
SELECT range_id FROM nvtx_overlap_holders
ORDER BY range_id
