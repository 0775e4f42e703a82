-- kernel_blocks: how much parallel work each kernel launches, per kernel name: the mean
-- number of thread blocks per launch (gridX * gridY * gridZ), to tell "each call does more
-- work" from "each call runs a different path" when two runs are compared.
-- Parameters:
--   $name_kind          VARCHAR  'demangled' | 'short'
--   $start_ns, $end_ns  BIGINT or NULL (time window, nsys rule)
--   $selection          BIGINT or NULL: a work_selection id (--nvtx, --step)
-- Columns:
--   name        VARCHAR  kernel name of the requested kind
--   avg_blocks  DOUBLE   mean thread blocks per launch
--   threads     DOUBLE   mean threads per block (blockX * blockY * blockZ)
-- By name.
SELECT
    s.value AS name,
    avg(k.gridX * k.gridY * k.gridZ) AS avg_blocks,
    avg(k.blockX * k.blockY * k.blockZ) AS threads
FROM filtered_kernels(NULL, NULL, NULL, $start_ns, $end_ns, selection := $selection) AS k
JOIN strings AS s
  ON s.id = CASE $name_kind WHEN 'short' THEN k.shortName ELSE k.demangledName END
GROUP BY s.value
ORDER BY name
