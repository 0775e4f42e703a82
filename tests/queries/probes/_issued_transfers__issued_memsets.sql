-- Probe of queries/_issued_transfers.sql's issued_memsets: every column, for each memset whose
-- issuing call matches $pattern.
SELECT * FROM issued_memsets($pattern, NULL, NULL, NULL, NULL, NULL) ORDER BY start_ns, api_name
