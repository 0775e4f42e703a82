-- stakeout_call_rows_export: the CUDA API calls that may have launched the listed launches of
-- a stakeout, read by SQLite from the export's own runtime table (Trace._sqlite_rows), so that
-- SQLite skips the other calls itself instead of handing every row to DuckDB (5M calls:
-- 0.4 CPU s for 100 launches, 0.8 for 92k, against 1.1 for DuckDB's scan of the table).
-- Keeps every call whose correlation id is listed; the process is matched afterwards
-- (queries/stakeout_calls.sql), as queries/stakeout_call_rows.sql does for the views.
-- Needs CUPTI_ACTIVITY_KIND_RUNTIME with every column below.
--
-- Parameters:
--   $correlation_ids  TEXT     a JSON array of the launches' correlation ids (integers)
--   $low_rowid        INTEGER  the least rowid of the calls read (a part of the table: the
--   $high_rowid       INTEGER  greatest; tracelens.trace.parts reads the parts side by side)
--
-- Columns (in the table's order):
--   start          INTEGER  call start, ns from session start
--   end            INTEGER  call end, ns
--   eventClass     INTEGER  nsys event class (a runtime call's class sorts before a driver's)
--   globalTid      INTEGER  the calling thread (serialized global id)
--   correlationId  INTEGER  CUPTI correlation id
--   nameId         INTEGER  StringIds id of the function name
SELECT start, "end", eventClass, globalTid, correlationId, nameId
FROM CUPTI_ACTIVITY_KIND_RUNTIME
WHERE rowid BETWEEN $low_rowid AND $high_rowid
  AND correlationId IN (SELECT value FROM json_each($correlation_ids))
