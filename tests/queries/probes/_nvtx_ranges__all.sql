-- Probe of queries/_nvtx_ranges.sql: every range nvtx_ranges() gives.
SELECT * FROM nvtx_ranges() ORDER BY range_id
