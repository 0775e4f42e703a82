-- report_runtime_threads_export: the distinct threads of the CUDA API calls, from the
-- export's own table by SQLite (Trace._sqlite_rows) when it is read directly: the
-- report's header takes their processes (pid_of) from these few rows. SQLite's DISTINCT
-- over the one column costs ~0.3 CPU s on 5M calls, where report_runtime_pids.sql through
-- DuckDB's scanner costs ~0.45. The caller checks each is an integer (nsys writes
-- nothing else) and reads the view otherwise.
-- Needs CUPTI_ACTIVITY_KIND_RUNTIME with globalTid.
--
-- Columns:
--   globalTid  INTEGER  nsys's global thread id (pid in bits 24-47), never NULL here
SELECT DISTINCT globalTid
FROM CUPTI_ACTIVITY_KIND_RUNTIME
WHERE globalTid IS NOT NULL
