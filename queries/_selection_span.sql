-- _selection_span: the GPU time a work selection spans: from its first operation's start
-- to its last operation's end, over kernels, memcpys, memsets and graph replays. One row
-- (NULLs for an empty selection).
-- Parameters: $selection BIGINT (a work_selection id).
-- Columns:
--   start_ns  BIGINT  start of the earliest selected operation, ns from session start
--   end_ns    BIGINT  end of the latest selected operation, ns
SELECT min(op.start) AS start_ns, max(op."end") AS end_ns
FROM gpu_operations() AS op
WHERE in_selection(op.globalPid, op.correlationId, $selection)
