-- findings_selected_pairs: the (process, device) pairs the GPU work of a selection ran as,
-- those whose every GPU operation findings' GPU rules sweep under a work selection
-- (--nvtx, --step: tracelens.findings._SharedWork._device_work): the pairs alone, when no
-- util rule reads the selected work itself (reading it for them read every selected
-- operation).
--
-- Parameters:
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter (util_work's)
--
-- Columns (by pid, device):
--   pid     BIGINT   process id (pid_of(globalPid)), as util_work's pid
--   device  INTEGER  CUDA device ordinal
SELECT DISTINCT pid_of(w.globalPid)::BIGINT AS pid, w.deviceId::INTEGER AS device
FROM gpu_work($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS w
ORDER BY pid, device
