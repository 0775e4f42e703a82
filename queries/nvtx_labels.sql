-- nvtx_labels: the distinct labels of NVTX ranges, most frequent first (for suggestions).
-- Needs the nvtx_text table (Trace.load_nvtx_text()).
-- Columns:
--   label   VARCHAR  range label (text, or the registered string of textId)
--   ranges  BIGINT   how many ranges carry it
SELECT coalesce(n.text, s.value) AS label, count(*) AS ranges
FROM nvtx_text AS n
LEFT JOIN strings AS s ON s.id = n.textId
WHERE is_nvtx_range(n.eventType, n."end") AND coalesce(n.text, s.value) IS NOT NULL
GROUP BY 1
ORDER BY ranges DESC, label
