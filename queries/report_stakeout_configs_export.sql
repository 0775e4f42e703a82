-- report_stakeout_configs_export: the launch configurations of some kernels (the rows
-- stakeout_configs.sql groups, before names are put on them), aggregated by SQLite from
-- the export's own kernel table (Trace._sqlite_rows) when it is read directly: DuckDB's
-- scanner converts every launch's ten columns before its join keeps the few kernels
-- (5M launches: ~2.5 CPU s against ~1.4 for SQLite). One row per name id and
-- configuration. `odd` counts the rows that hold what nsys never writes (a start or end
-- that is not an integer, any other column neither an integer nor NULL): the caller then
-- reads the view instead, which says what is wrong.
-- Needs CUPTI_ACTIVITY_KIND_KERNEL with every column below.
--
-- Parameters:
--   $name_ids   TEXT  a JSON array of the StringIds ids of the kernels' names (integers)
--   $name_kind  TEXT  'demangled' | 'short': the name column the ids are of
--
-- Columns:
--   name_id              INTEGER  StringIds id of the kernel's name ($name_kind)
--   gridX, gridY, gridZ  INTEGER  grid size
--   blockX, blockY, blockZ INTEGER block size
--   registers            INTEGER  registers per thread (NULL where the export has none)
--   shared_bytes         INTEGER  static + dynamic shared memory per block
--   launches             INTEGER  launches
--   total_ns             INTEGER  summed duration, ns
--   first_start          INTEGER  earliest start, ns (the caller checks the time range)
--   last_end             INTEGER  latest end, ns
--   odd                  INTEGER  rows with values nsys never writes (0 when none)
WITH launches AS (
    SELECT CASE $name_kind WHEN 'short' THEN shortName ELSE demangledName END AS name_id,
           gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread,
           staticSharedMemory, dynamicSharedMemory, start, "end"
    FROM CUPTI_ACTIVITY_KIND_KERNEL
)
SELECT name_id, gridX, gridY, gridZ, blockX, blockY, blockZ,
       registersPerThread AS registers,
       coalesce(staticSharedMemory, 0) + coalesce(dynamicSharedMemory, 0) AS shared_bytes,
       count(*) AS launches,
       sum("end" - start) AS total_ns,
       min(start) AS first_start,
       max("end") AS last_end,
       sum(typeof(start) <> 'integer' OR typeof("end") <> 'integer'
           OR typeof(gridX) NOT IN ('integer', 'null') OR typeof(gridY) NOT IN ('integer', 'null')
           OR typeof(gridZ) NOT IN ('integer', 'null') OR typeof(blockX) NOT IN ('integer', 'null')
           OR typeof(blockY) NOT IN ('integer', 'null') OR typeof(blockZ) NOT IN ('integer', 'null')
           OR typeof(registersPerThread) NOT IN ('integer', 'null')
           OR typeof(staticSharedMemory) NOT IN ('integer', 'null')
           OR typeof(dynamicSharedMemory) NOT IN ('integer', 'null')) AS odd
FROM launches
WHERE name_id IN (SELECT value FROM json_each($name_ids))
GROUP BY name_id, gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread, shared_bytes
