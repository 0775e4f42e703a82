-- ranks_launch_environment: the environment variables nsys recorded for the processes it
-- launched (META_DATA_CAPTURE rows PROCESS_<n>:ENVIRONMENT_VARIABLE, each 'NAME=VALUE'),
-- where a launcher's rank variable (RANK, OMPI_COMM_WORLD_RANK, ...) can be. Runs on the
-- export's own tables (Trace._sqlite_rows). No parameters. Needs META_DATA_CAPTURE (export
-- schema 3.4+).
--
-- Columns:
--   value  TEXT  one variable, 'NAME=VALUE'
SELECT value
FROM META_DATA_CAPTURE
WHERE name LIKE 'PROCESS\_%:ENVIRONMENT\_VARIABLE' ESCAPE '\'
