-- info_osrt_calls: how many OS runtime calls the export holds (OSRT_API rows of eventClass 27,
-- the rows `api --osrt` sums; 31 and 32 only mark where nsys's OS runtime tracing started
-- and finished) and when they start and end: info's osrt row, in the columns of
-- _event_counts.sql's rows. Kept out of _event_counts (and so out of info's span and the
-- origin that Start columns count from, _first_event.sql): what those measure is left as
-- it was.
-- No parameters.
-- Columns:
--   kind      VARCHAR  osrt
--   events    BIGINT   OS runtime calls
--   first_ns  BIGINT   earliest start, ns from session start (NULL when no call)
--   last_ns   BIGINT   latest end, ns from session start (NULL when no call)
--   pids      BIGINT[] NULL (info's processes are those with CUDA activity)
SELECT 'osrt' AS kind, count(*) AS events, min(start) AS first_ns, max("end") AS last_ns,
       CAST(NULL AS BIGINT[]) AS pids
FROM osrt_calls
WHERE eventClass = 27
