-- nvtx_event_kinds: what the export's NVTX events are, for saying why `nvtx` found no
-- range (tracelens.hints.why_no_ranges): its push/pop ranges, its start/end ranges and
-- its other events (marks, domain and string registrations). Needs nvtx_text
-- (Trace.load_nvtx_text). No parameters.
--
-- Columns:
--   pushpop   BIGINT  push/pop ranges (eventType 59 and nsys's 70)
--   startend  BIGINT  start/end ranges (eventType 60 and nsys's 71)
--   other     BIGINT  every other NVTX event
SELECT count(*) FILTER (WHERE eventType IN (59, 70)) AS pushpop,
       count(*) FILTER (WHERE eventType IN (60, 71)) AS startend,
       count(*) FILTER (WHERE NOT is_nvtx_range_type(eventType)) AS other
FROM nvtx_text
