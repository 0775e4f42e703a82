-- diff_processes: the name of each process the export lists, for the diff's clue that says
-- which process launched the kernels only one run has (a data loader beside the training
-- loop, a second job on the GPU, or the program itself): compare/launchers.py. A small
-- metadata table (one row per process): runs on the export's own tables
-- (Trace._sqlite_rows). A pid listed twice (a process that exec'd another program) keeps
-- its first row's name there, as `tracelens info` and the report header name it.
-- No parameters.
--
-- Columns (in the table's order):
--   pid   INTEGER  operating-system process id (the work's pid: pid_of(globalPid))
--   name  TEXT     process name as the export has it (NULL: none recorded)
SELECT pid, name
FROM PROCESSES
WHERE pid IS NOT NULL
