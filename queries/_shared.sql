-- _shared: the named helpers every query file uses, installed once per connection by the
-- loader (after the views). One definition each of: the pid/tid decode, the event filter
-- (device, pid, stream, time window with nsys's "starts in, ends in or spans" rule), the
-- filtered GPU work views, and what an NVTX range is.
--
-- Scalar macros:
--   pid_of(global_id)   BIGINT  operating-system pid from a globalPid/globalTid (bits 24-47)
--   tid_of(global_tid)  BIGINT  operating-system tid from a globalTid (bits 0-23)
--   in_window(s, e, t0, t1)     BOOLEAN  [s, e] starts in, ends in or spans [t0, t1] (ns);
--                                        a NULL bound is "no bound"
--   event_passes(device_id, stream_id, global_pid, s, e, device, pid, stream, t0, t1)
--                               BOOLEAN  the event filter; each NULL filter value passes all
--   is_nvtx_range(event_type, e)         BOOLEAN  a closed push/pop or start/end range
--                                        (eventType 59, 60, and nsys's own 70, 71)
--
-- Table macros (the filter arguments as event_passes; every column of the view):
--   filtered_kernels(device, pid, stream, t0, t1)
--   filtered_memcpys(device, pid, stream, t0, t1)
--   filtered_memsets(device, pid, stream, t0, t1)
CREATE OR REPLACE TEMP MACRO pid_of(global_id) AS (global_id >> 24) & 16777215;
CREATE OR REPLACE TEMP MACRO tid_of(global_tid) AS global_tid & 16777215;
CREATE OR REPLACE TEMP MACRO in_window(s, e, t0, t1) AS
    (t0 IS NULL OR e >= t0) AND (t1 IS NULL OR s <= t1);
CREATE OR REPLACE TEMP MACRO event_passes(device_id, stream_id, global_pid, s, e, device, pid, stream, t0, t1) AS
    (device IS NULL OR device_id = device)
    AND (stream IS NULL OR stream_id = stream)
    AND (pid IS NULL OR pid_of(global_pid) = pid)
    AND in_window(s, e, t0, t1);
CREATE OR REPLACE TEMP MACRO is_nvtx_range(event_type, e) AS
    event_type IN (59, 60, 70, 71) AND e IS NOT NULL;
CREATE OR REPLACE TEMP MACRO filtered_kernels(device, pid, stream, t0, t1) AS TABLE
    SELECT * FROM kernels
    WHERE event_passes(deviceId, streamId, globalPid, start, "end", device, pid, stream, t0, t1);
CREATE OR REPLACE TEMP MACRO filtered_memcpys(device, pid, stream, t0, t1) AS TABLE
    SELECT * FROM memcpys
    WHERE event_passes(deviceId, streamId, globalPid, start, "end", device, pid, stream, t0, t1);
CREATE OR REPLACE TEMP MACRO filtered_memsets(device, pid, stream, t0, t1) AS TABLE
    SELECT * FROM memsets
    WHERE event_passes(deviceId, streamId, globalPid, start, "end", device, pid, stream, t0, t1);
