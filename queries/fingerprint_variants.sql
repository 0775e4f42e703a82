-- fingerprint_variants: the distinct (kernel name, launch configuration) pairs of the trace,
-- the raw material of a fingerprint's kernel variants (tracelens.fingerprint normalizes the
-- names in Python, once per distinct name, and registers the result as fp_variant_keys).
--
-- Parameters: none.
--
-- Columns:
--   name_id   BIGINT   StringIds id of the demangled name (kernels.demangledName)
--   name      VARCHAR  the demangled name ('<unknown string id N>' when StringIds lacks it)
--   grid_x    BIGINT   grid dimensions, blocks (NULL when the export has no such column)
--   grid_y    BIGINT
--   grid_z    BIGINT
--   block_x   BIGINT   block dimensions, threads
--   block_y   BIGINT
--   block_z   BIGINT
--   launches  BIGINT   launches with this name and configuration
SELECT
    k.demangledName AS name_id,
    coalesce(s.value, '<unknown string id ' || k.demangledName || '>') AS name,
    k.gridX AS grid_x,
    k.gridY AS grid_y,
    k.gridZ AS grid_z,
    k.blockX AS block_x,
    k.blockY AS block_y,
    k.blockZ AS block_z,
    count(*) AS launches
FROM kernels AS k
LEFT JOIN strings AS s ON s.id = k.demangledName
GROUP BY ALL
ORDER BY name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z
