-- report_stakeout_configs_export: the launch configurations of some kernels (the rows
-- stakeout_configs.sql groups, before names are put on them and the two shared memory
-- sizes are added), aggregated by SQLite from the export's own kernel table
-- (Trace._sqlite_rows) when it is read directly: DuckDB's scanner converts every launch's
-- ten columns before its join keeps the few kernels. One row per name id and
-- configuration.
-- What nsys never writes shows in the aggregates, which the caller checks (it then reads
-- the view instead, which says what is wrong), without a per-row type test (5M launches,
-- 0.5M of them kept: 1.4 against 1.9 CPU s with typeof() on each column): a grouped column
-- that is neither an integer nor NULL is one of the row's values; a NULL start or end
-- makes timed < launches; a real one makes total_ns real; text or a blob sorts above every
-- number, so it is last_start or last_end.
-- Needs CUPTI_ACTIVITY_KIND_KERNEL with every column below.
--
-- Parameters:
--   $name_ids   TEXT  a JSON array of the StringIds ids of the kernels' names (integers)
--   $name_kind  TEXT  'demangled' | 'short': the name column the ids are of
--
-- Columns:
--   name_id                INTEGER  StringIds id of the kernel's name ($name_kind)
--   gridX, gridY, gridZ    INTEGER  grid size
--   blockX, blockY, blockZ INTEGER  block size
--   registers              INTEGER  registers per thread (NULL where the export has none)
--   static_shared          INTEGER  static shared memory per block, bytes (NULL: none)
--   dynamic_shared         INTEGER  dynamic shared memory per block, bytes (NULL: none)
--   launches               INTEGER  launches
--   total_ns               INTEGER  summed duration, ns
--   first_start            INTEGER  earliest start, ns (the caller checks the time range)
--   last_end               INTEGER  latest end, ns
--   last_start             INTEGER  latest start, ns
--   timed                  INTEGER  launches with a start and an end (not NULL)
WITH launches AS (
    SELECT CASE $name_kind WHEN 'short' THEN shortName ELSE demangledName END AS name_id,
           gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread,
           staticSharedMemory, dynamicSharedMemory, start, "end"
    FROM CUPTI_ACTIVITY_KIND_KERNEL
)
SELECT name_id, gridX, gridY, gridZ, blockX, blockY, blockZ,
       registersPerThread AS registers,
       staticSharedMemory AS static_shared,
       dynamicSharedMemory AS dynamic_shared,
       count(*) AS launches,
       sum("end" - start) AS total_ns,
       min(start) AS first_start,
       max("end") AS last_end,
       max(start) AS last_start,
       count("end" - start) AS timed
FROM launches
WHERE name_id IN (SELECT value FROM json_each($name_ids))
  -- a record that ends before it starts (a damaged export) is left out, as the views'
  -- queries leave it out (filtered_kernels); what nsys never writes stays, for the caller
  -- to see: a NULL time (timed), a text or blob start (above every number, and so above
  -- the largest integer)
  AND NOT coalesce("end" < start AND start <= 9223372036854775807, 0)
GROUP BY name_id, gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread,
         staticSharedMemory, dynamicSharedMemory
