-- _selection_span: the GPU time a work selection spans: from its first operation's start
-- to its last operation's end, over kernels, memcpys, memsets and graph replays, as a
-- window that keeps every selected operation by in_window's rule (nsys's: an operation
-- starting at the window's end is out). One row (NULLs for an empty selection).
-- Parameters: $selection BIGINT (a work_selection id).
-- Columns:
--   start_ns  BIGINT  start of the earliest selected operation, ns from session start
--   end_ns    BIGINT  end of the latest selected operation, ns; one past the latest start
--                     when that is later (an operation of no duration that starts at the
--                     latest end, which a window ending there would leave out)
SELECT min(op.start) AS start_ns, greatest(max(op."end"), max(op.start) + 1) AS end_ns
FROM gpu_operations() AS op
WHERE in_selection(op.globalPid, op.correlationId, $selection)
