-- Probe of queries/_issued_transfers.sql's issued_memcpys: every column, for each memcpy whose
-- issuing call matches $pattern.
SELECT * FROM issued_memcpys($pattern, NULL, NULL, NULL, NULL, NULL) ORDER BY start_ns, api_name
