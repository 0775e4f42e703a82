-- Probe of queries/_nvtx_range_groups.sql: the nvtx_range_groups table it creates.
SELECT range_id, gid, range, style, range_rank
FROM nvtx_range_groups
ORDER BY range_id
