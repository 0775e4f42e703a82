-- fingerprint_launches: every kernel launch as a fingerprint sees it: device, normalized
-- name, launch configuration, a code of those (for the block digests), its NVTX path and its
-- launch order keys. No step yet (fingerprint_launch_steps adds them). Used as the body of
-- the temp view fp_launches; no parameters (a view cannot bind them).
--
-- Inputs (temp tables the library creates):
--   fp_names(name_id, norm_id, name_code)  per demangled name id: the id of its normalized
--       name (the names sorted) and a 31-bit code of the normalized name (stable across
--       traces)
--   fp_paths(pid, correlation_id, path_id)  fingerprint_nvtx_paths; may be empty
--   fp_path_lists(path_id, ranges)          fingerprint_range_paths: each path's ranges
--
-- Columns:
--   device          BIGINT     CUDA device ordinal
--   norm_id         BIGINT     fp_names.norm_id of the kernel's name
--   grid_x, grid_y, grid_z     BIGINT  grid, blocks (NULL when the export lacks them)
--   block_x, block_y, block_z  BIGINT  block, threads
--   code            BIGINT     31-bit code of (normalized name, grid, block): name_code plus
--                              each dimension (+1, NULL as 0) times its own prime, mod 2^31-1
--   step            BIGINT     NULL (see fingerprint_launch_steps)
--   region          VARCHAR[]  NVTX labels enclosing the launching call, outermost first
--   ranges          STRUCT(label VARCHAR, start BIGINT, "end" BIGINT)[]  those ranges
--   correlation_id  BIGINT     CUDA call order within the process
--   start           BIGINT     GPU start, ns (breaks ties of one call: CUDA graph kernels)
SELECT
    k.deviceId AS device,
    n.norm_id,
    k.gridX AS grid_x,
    k.gridY AS grid_y,
    k.gridZ AS grid_z,
    k.blockX AS block_x,
    k.blockY AS block_y,
    k.blockZ AS block_z,
    (
        n.name_code
        + (coalesce(k.gridX, -1) + 1) * 1000003
        + (coalesce(k.gridY, -1) + 1) * 10007
        + (coalesce(k.gridZ, -1) + 1) * 101
        + (coalesce(k.blockX, -1) + 1) * 7919
        + (coalesce(k.blockY, -1) + 1) * 131
        + (coalesce(k.blockZ, -1) + 1) * 17
    ) % 2147483647 AS code,
    NULL::BIGINT AS step,
    coalesce(list_transform(l.ranges, lambda r: r.label), []::VARCHAR[]) AS region,
    l.ranges,
    k.correlationId AS correlation_id,
    k.start
FROM kernels AS k
JOIN fp_names AS n ON n.name_id = k.demangledName
LEFT JOIN fp_paths AS p ON p.pid = pid_of(k.globalPid) AND p.correlation_id = k.correlationId
LEFT JOIN fp_path_lists AS l ON l.path_id = p.path_id
