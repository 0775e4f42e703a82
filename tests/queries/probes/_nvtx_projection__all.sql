-- Probe of queries/_nvtx_projection.sql: the nvtx_projection table it creates.
SELECT * FROM nvtx_projection ORDER BY range_id
