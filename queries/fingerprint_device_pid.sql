-- fingerprint_device_pid: the process that launched the kernels of one device, from the first
-- kernel row of that device in the export's own kernel table (Trace._sqlite_rows: SQLite
-- stops at that row). tracelens.fingerprint.units asks it only for the devices on which the
-- export's context table lists one process (tracelens.steps_order.one_process_devices: a
-- process launches only on a device it has a context on), so any of their kernels names it,
-- and the launches are then read without their globalPid (fingerprint_launches' $pids).
-- Needs CUPTI_ACTIVITY_KIND_KERNEL with deviceId and globalPid.
--
-- Parameters:
--   $device  INTEGER  CUDA device ordinal (deviceId)
--
-- Columns (one row; none when the device has no kernel with a process):
--   globalPid  INTEGER  the launching process (serialized global id, as the kernels hold it)
SELECT globalPid
FROM CUPTI_ACTIVITY_KIND_KERNEL
WHERE deviceId = $device AND globalPid IS NOT NULL
LIMIT 1
