-- Probe of queries/_lineup.sql's lineup_activity_rows: two kernel names handed over on stream
-- 7 (one under an id no StringIds row holds), and the trace's memory operations by stream.
WITH per_kernel(group_key, name_id, display_id, calls, total_ns) AS (
    VALUES (7::BIGINT, 1::BIGINT, 2::BIGINT, 2::BIGINT, 12000::BIGINT), (7, 999, 999, 1, 5)
)
SELECT *
FROM lineup_activity_rows('per_kernel', 'stream', NULL, NULL, NULL, NULL, NULL)
ORDER BY group_key NULLS LAST, total_ns DESC, kind, name, display
