-- stakeout_configs: how some kernels were launched: one row per kernel and launch
-- configuration (grid, block, registers, shared memory), most launches first.
--
-- Parameters:
--   $names      VARCHAR    kernel names (of $name_kind), as one JSON list
--                          (tracelens.trace.list_param)
--   $name_kind  VARCHAR    'demangled' | 'short'
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter (NULL: all;
--                          a launch is kept when it ends at or after $start_ns and starts
--                          before $end_ns: in_window, nsys's rule)
--
-- Columns:
--   name           VARCHAR
--   grid           VARCHAR  'X×Y×Z'
--   block          VARCHAR  'X×Y×Z'
--   registers      BIGINT   registers per thread (NULL where the export lacks it)
--   shared_bytes   BIGINT   static + dynamic shared memory per block
--   launches       BIGINT
--   total_ns       BIGINT
--   avg_ns         DOUBLE
WITH sel AS (
    SELECT s.id, s.value AS name FROM strings AS s
    WHERE s.value IN (SELECT unnest(text_list($names)))
)
SELECT
    sel.name,
    k.gridX || '×' || k.gridY || '×' || k.gridZ AS grid,
    k.blockX || '×' || k.blockY || '×' || k.blockZ AS block,
    k.registersPerThread AS registers,
    coalesce(k.staticSharedMemory, 0) + coalesce(k.dynamicSharedMemory, 0) AS shared_bytes,
    count(*) AS launches,
    sum(k."end" - k.start)::BIGINT AS total_ns,
    avg(k."end" - k.start) AS avg_ns
FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS k
JOIN sel ON sel.id = (CASE $name_kind WHEN 'short' THEN k.shortName ELSE k.demangledName END)
GROUP BY ALL
ORDER BY sel.name, launches DESC, total_ns DESC, grid, block
