-- Probe of queries/_lineup.sql's lineup_activity_rows: two kernel names handed over on stream
-- 7 of device 0 and the trace's process, 10 (one under an id no StringIds row holds), and the
-- trace's memory operations by stream (of their device and process).
WITH per_kernel(group_key, stream_device, stream_pid, name_id, display_id, calls, total_ns) AS (
    VALUES (7::BIGINT, 0::BIGINT, 10::BIGINT, 1::BIGINT, 2::BIGINT, 2::BIGINT, 12000::BIGINT),
           (7, 0, 10, 999, 999, 1, 5)
)
SELECT *
FROM lineup_activity_rows('per_kernel', 'stream', NULL, NULL, NULL, NULL, NULL)
ORDER BY stream_device NULLS LAST, stream_pid NULLS LAST, group_key NULLS LAST, total_ns DESC,
         kind, name, display
