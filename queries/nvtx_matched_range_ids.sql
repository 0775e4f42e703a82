-- nvtx_matched_range_ids: the NVTX ranges an --nvtx pattern matches, by RangeId (the
-- report's NVTX tree of an --nvtx selection keeps these and the ranges nested in them).
-- The match is nvtx_label_matches (queries/_nvtx_matched_ranges.sql), as
-- nvtx_matching_ranges counts them. Needs nvtx_ranges() (Trace.load_nvtx_text).
-- Parameters:
--   $label_re  VARCHAR  filters.glob_regex of the --nvtx glob (RE2, matched in full)
-- Columns:
--   range_id  BIGINT  the NVTX_EVENTS rowid (nsys's RangeId)
-- Ordered by range_id.
SELECT range_id
FROM nvtx_ranges()
WHERE nvtx_label_matches(label, name, $label_re)
ORDER BY range_id
