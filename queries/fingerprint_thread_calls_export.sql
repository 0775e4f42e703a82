-- fingerprint_thread_calls_export: the CUDA API calls of every thread but the listed ones (each
-- process's busiest as sampled by queries/fingerprint_thread_sample_export.sql), read by
-- SQLite from the export's own runtime table (Trace._sqlite_rows): SQLite skips the busiest
-- threads' calls itself, where queries/fingerprint_thread_calls.sql hands DuckDB two columns
-- of every call. The threads are 16 parameters compared one by one, not an IN list: SQLite
-- looks each row up in an IN list's b-tree (5M calls: 0.52 CPU s against 0.28 for four
-- comparisons); fewer threads repeat one, more are not read this way. At most $limit rows a
-- part: more means the sample missed a busiest thread, and that query is read instead. Every
-- record is a row (a runtime and a driver record of one call are two, as that query counts
-- them). Needs CUPTI_ACTIVITY_KIND_RUNTIME with globalTid and correlationId.
--
-- Parameters:
--   $t0 .. $t15  INTEGER  the threads to skip (globalTid)
--   $limit       INTEGER  the most rows returned (by each part of the table)
--   $low_rowid   INTEGER  the least rowid of the calls read (a part of the table: the
--   $high_rowid  INTEGER  greatest; tracelens.trace.parts reads the parts side by side)
--
-- Columns:
--   globalTid      INTEGER  the calling thread (serialized global id)
--   correlationId  INTEGER  correlation id shared by the call and the GPU work it launched
SELECT globalTid, correlationId
FROM CUPTI_ACTIVITY_KIND_RUNTIME
WHERE rowid BETWEEN $low_rowid AND $high_rowid
  AND globalTid IS NOT NULL
  AND globalTid != $t0
  AND globalTid != $t1
  AND globalTid != $t2
  AND globalTid != $t3
  AND globalTid != $t4
  AND globalTid != $t5
  AND globalTid != $t6
  AND globalTid != $t7
  AND globalTid != $t8
  AND globalTid != $t9
  AND globalTid != $t10
  AND globalTid != $t11
  AND globalTid != $t12
  AND globalTid != $t13
  AND globalTid != $t14
  AND globalTid != $t15
LIMIT $limit
