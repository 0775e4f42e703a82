-- fingerprint_thread_sample_export: the CUDA API calls per thread in a sample of the export's
-- runtime table, read by SQLite (Trace._sqlite_rows): $windows runs of $width consecutive rows
-- spread evenly over the rowids, each found by its rowid range, so the sample costs
-- milliseconds however big the table. tracelens.fingerprint.threads takes each process's
-- most sampled thread as its busiest and a thread's sampled calls as a lower bound of its
-- calls. Needs CUPTI_ACTIVITY_KIND_RUNTIME with globalTid.
--
-- Parameters:
--   $windows  INTEGER  how many runs of rows
--   $width    INTEGER  rows per run
--
-- Columns:
--   globalTid  INTEGER  the calling thread (serialized global id)
--   calls      INTEGER  its calls in the sample (records: a runtime and a driver record of
--                       one call count twice, as queries/fingerprint_thread_calls.sql counts)
--   span       INTEGER  rowids the table spans (greatest - least + 1), the sample's whole
WITH RECURSIVE bounds AS (
    -- min and max each a lookup of the rowid b-tree (together in one SELECT: a scan)
    SELECT (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME) AS first,
           (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME) AS last
),
windows(start, first, last, stride) AS (
    SELECT first, first, last, max((last - first + 1) / $windows, $width)
    FROM bounds
    WHERE first IS NOT NULL
    UNION ALL
    SELECT start + stride, first, last, stride FROM windows WHERE start + stride <= last
)
SELECT r.globalTid, count(*) AS calls, max(w.last - w.first + 1) AS span
FROM windows AS w
JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.rowid BETWEEN w.start AND w.start + $width - 1
WHERE r.globalTid IS NOT NULL
GROUP BY r.globalTid
