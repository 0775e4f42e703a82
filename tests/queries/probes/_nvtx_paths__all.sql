-- Probe of queries/_nvtx_paths.sql: the nvtx_paths table it creates.
SELECT * FROM nvtx_paths ORDER BY range_id
