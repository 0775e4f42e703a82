-- Probe of queries/_shared.sql's calls_in_ranges over ranges given here (globalTid: vm 1,
-- pid 4242 tid 4243, and pid 4343 tid 4343).
WITH spans(span, start, "end", globalTid) AS (VALUES
    ('early', 800, 3000, (1::BIGINT << 48) | (4242::BIGINT << 24) | 4243),
    ('late', 5000, 7350, (1::BIGINT << 48) | (4242::BIGINT << 24) | 4243),
    ('nested', 5920, 5960, (1::BIGINT << 48) | (4242::BIGINT << 24) | 4243),
    ('other', 2000, 2900, (1::BIGINT << 48) | (4343::BIGINT << 24) | 4343)
)
SELECT correlationId, pid, span, start, "end"
FROM calls_in_ranges('spans')
ORDER BY pid, correlationId
