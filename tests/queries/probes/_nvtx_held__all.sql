-- Probe of queries/_nvtx_held.sql: the nvtx_held table it creates.
SELECT range_id FROM nvtx_held ORDER BY range_id
