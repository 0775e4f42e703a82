-- Probe of queries/_nvtx_range_ops.sql: the nvtx_range_ops table it creates.
SELECT * FROM nvtx_range_ops ORDER BY range_id
