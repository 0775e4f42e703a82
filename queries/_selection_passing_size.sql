-- _selection_passing_size: how many GPU operations of a work selection pass an event filter
-- (device, process, stream, window): whether a window asked with --step holds any of the
-- selected steps' work (tracelens.stepwork.select_steps). One row.
-- Parameters:
--   $selection                                    BIGINT  a work_selection id
--   $device, $pid, $stream, $start_ns, $end_ns    the event filter (NULL: any)
-- Columns:
--   operations  BIGINT  the operations (kernels, memcpys, memsets, graph replays) that pass
SELECT count(*) AS operations
FROM gpu_work($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
