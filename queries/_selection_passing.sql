-- _selection_passing: the GPU operations of a work selection that pass an event filter
-- (device, process, stream, window): what tracelens.stepwork.select_steps narrows the
-- trace's steps' work to (the steps are found on the whole trace, so their work holds
-- every device, process and stream). Kernels, memcpys, memsets and graph replays.
-- Parameters:
--   $selection                                    BIGINT  a work_selection id
--   $device, $pid, $stream, $start_ns, $end_ns    the event filter (NULL: any)
-- Columns (ordered by globalPid, correlationId):
--   globalPid      BIGINT  the GPU operation's globalPid
--   correlationId  BIGINT  its correlationId
SELECT DISTINCT globalPid, correlationId
FROM gpu_work($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
ORDER BY globalPid, correlationId
