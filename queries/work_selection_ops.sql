-- work_selection_ops: the GPU operations of one work selection (tracelens.filters.select_work:
-- the work --nvtx or --step keeps), to narrow a table of operations read another way (the
-- diff's NVTX regions, from trace.nvtx_paths()).
-- Parameters: $selection BIGINT  the selection id (EventFilter.selection)
-- Columns:
--   globalPid      BIGINT  the operation's globalPid
--   correlationId  BIGINT  its correlationId (unique within its process)
SELECT globalPid, correlationId
FROM work_selection
WHERE selection_id = $selection
ORDER BY globalPid, correlationId
