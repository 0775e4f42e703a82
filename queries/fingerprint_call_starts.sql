-- fingerprint_call_starts: when the host made the CUDA API calls that launched some kernels,
-- by the kernels' device, process and correlation id. tracelens.fingerprint.ends asks it
-- for the launches outside the steps of a host thread that launched nothing in them: such a
-- thread has no sequence of its own to place them by, so they are before the steps when
-- their calls were made before the first step began, after them when made after the last
-- one ended (its launches compared by correlation id with the other threads' counted
-- before or between the steps as the host scheduler happened to run the two threads).
-- A few rows: only those launches are asked for, and none on most traces.
--
-- Parameters:
--   $pids  BOOLEAN  every launch asked for names its process (global_pid): the calls are
--                   found by it and the kernel table is not read; false: a launch without
--                   one finds it through its kernel record (device and correlation id, on a
--                   device one process launched on)
--
-- Input (a relation the library registers):
--   fp_call_keys(device, global_pid, correlation_id)  the launches asked for: device
--       ordinal, launching process (globalPid; NULL: the one process that launched on that
--       device) and correlation id
--
-- Columns (one row per launch asked for whose call is in the export; by device, process and
-- correlation id: a few rows):
--   device          BIGINT  CUDA device ordinal, as asked
--   global_pid      BIGINT  the launching process, as asked (NULL as asked)
--   correlation_id  BIGINT  correlation id, as asked
--   call_ns         BIGINT  start of the launching call, ns from session start (the
--                           earliest of its records: runtime and driver)
WITH asked AS (
    SELECT q.device::BIGINT AS device, q.global_pid::BIGINT AS global_pid,
           q.correlation_id::BIGINT AS correlation_id,
           coalesce(q.global_pid, k.globalPid)::BIGINT AS pid
    FROM fp_call_keys AS q
    LEFT JOIN kernels AS k
        ON NOT $pids AND q.global_pid IS NULL AND k.deviceId = q.device
        AND k.correlationId = q.correlation_id
)
SELECT a.device, a.global_pid, a.correlation_id, min(r.start)::BIGINT AS call_ns
FROM asked AS a
JOIN runtime_calls AS r
    ON r.correlationId = a.correlation_id AND r.globalTid - tid_of(r.globalTid) = a.pid
GROUP BY a.device, a.global_pid, a.correlation_id
ORDER BY a.device, a.global_pid, a.correlation_id
