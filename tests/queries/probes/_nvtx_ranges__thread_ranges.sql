-- Probe of queries/_nvtx_ranges.sql's thread_ranges.
SELECT tid_of(globalTid) AS tid, start, "end", label, top_level
FROM thread_ranges()
ORDER BY tid, start
