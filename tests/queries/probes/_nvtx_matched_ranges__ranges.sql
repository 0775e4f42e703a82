-- Probe of queries/_nvtx_matched_ranges.sql's nvtx_matched_ranges: the matched ranges of
-- $label_re by thread (its tid) and start, with their reach.
SELECT tid_of(global_tid) AS tid, start, "end", reach_end
FROM nvtx_matched_ranges($label_re)
ORDER BY global_tid, start
