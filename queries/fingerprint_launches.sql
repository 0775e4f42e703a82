-- fingerprint_launches: every kernel launch as a fingerprint sees it, read once (but the
-- records that end before they start: a damaged export's, left out as every command leaves
-- them out; tracelens.fingerprint.build says so and how many): what the
-- step search needs (device, stream, start, end, name id: tracelens.steps' launch sequence)
-- and what the units need (its launch configuration as two integers, the id of its NVTX path, its
-- launch order keys; the code of a variant for the block digests is worked out once per
-- variant, in tracelens.fingerprint.units, not per launch here). Integers only: the path's
-- labels are joined back per region (fingerprint_path_regions, fingerprint_paths), not per
-- launch. Unordered: tracelens.fingerprint.units sorts it (on one packed integer key, a
-- fraction of what an ORDER BY of the same columns costs).
--
-- Parameters:
--   $paths    BOOLEAN  false: the trace has no NVTX ranges (fp_paths is empty): the launches
--                      are not joined with it (on the 5M-kernel bench trace read directly,
--                      the join and its columns: ~0.3 CPU s)
--   $streams  BOOLEAN  read each launch's stream; false: stream is NULL and DuckDB leaves
--                      streamId out of the scan (~0.35 CPU s of the bench trace's 5M
--                      kernels read directly). The stream orders only launches that tie on
--                      device, process, correlation id and start (kernels of one CUDA graph
--                      launch starting in the same ns): tracelens.fingerprint.build reads
--                      them again with it when the launch order has such a tie
--   $pids     BOOLEAN  read each launch's process; false: global_pid is NULL and DuckDB
--                      leaves globalPid out of the scan (~0.35 CPU s of the bench trace's
--                      5M kernels read directly): tracelens.fingerprint.units asks so when
--                      the export's context table lists one process per device, whose
--                      process it then looks up (fingerprint_device_pid). True with $paths
--
-- Input (a temp table the library creates):
--   fp_paths(global_pid, correlation_id, path_id)  fingerprint_nvtx_paths; may be empty
--
-- The launch configuration comes as two integers, not the normalized name's variant: a
-- join with the names here cost a hash probe per launch; tracelens.fingerprint.units maps
-- each distinct (name_id, variant_hi, variant_lo), a few hundred, to its variant instead.
--
-- Columns:
--   device          INTEGER    CUDA device ordinal
--   stream          BIGINT     CUDA stream id (the step search's order of launches that
--                              start together); NULL unless $streams
--   start_ns        BIGINT     GPU start, ns from session start (breaks ties of one call:
--                              CUDA graph kernels)
--   end_ns          BIGINT     GPU end, ns
--   name_id         BIGINT     StringIds id of the demangled name
--   path_id         BIGINT     fp_paths.path_id of the launching call (the key of its ranges
--                              in fp_path_lists); NULL outside any NVTX range, and
--                              everywhere when not $paths
--   global_pid      BIGINT     the launching process (globalPid: the key of the launch's
--                              call, with correlation_id, for the step whose NVTX range
--                              holds the call and its thread; correlation ids are numbered
--                              per process, so the host launch order takes one process
--                              after another); NULL unless $pids
--   variant_hi      BIGINT     the launch configuration (grid, block) as two integers whose
--   variant_lo      BIGINT     order is the order of (grid_x, grid_y, grid_z, block_x,
--                              block_y, block_z), a missing dimension first: hi = grid_x +
--                              1, lo = (grid_y + 1) * 2^46 + (grid_z + 1) * 2^29 + (block_x
--                              + 1) * 2^18 + (block_y + 1) * 2^7 + (block_z + 1), NULL as 0.
--                              Fields do not overlap within CUDA's limits (grid 2^31-1 x
--                              65535 x 65535, block 1024 x 1024 x 64); a launch beyond them
--                              stops the query with 'fingerprint: launch configuration
--                              beyond CUDA limits'. Both NULL for a kernel without a name id
--                              (the step search counts it; the fingerprint leaves it out, as
--                              it does a name id StringIds does not hold)
--   correlation_id  BIGINT     CUDA call order within the process
SELECT
    k.deviceId::INTEGER AS device,
    CASE WHEN $streams THEN k.streamId END AS stream,
    k.start AS start_ns,
    k."end" AS end_ns,
    k.demangledName AS name_id,
    p.path_id,
    k.global_pid,
    CASE
        WHEN k.demangledName IS NULL THEN NULL
        WHEN k.beyond_limits THEN error('fingerprint: launch configuration beyond CUDA limits')
        ELSE coalesce(k.gridX, -1) + 1
    END AS variant_hi,
    CASE
        WHEN k.demangledName IS NOT NULL AND NOT k.beyond_limits
            THEN (coalesce(k.gridY, -1) + 1) * 70368744177664
            + (coalesce(k.gridZ, -1) + 1) * 536870912
            + (coalesce(k.blockX, -1) + 1) * 262144
            + (coalesce(k.blockY, -1) + 1) * 128
            + (coalesce(k.blockZ, -1) + 1)
    END AS variant_lo,
    k.correlationId AS correlation_id
FROM (
    SELECT
        *,
        CASE WHEN $pids THEN globalPid END AS global_pid,
        coalesce(
            gridX NOT BETWEEN 0 AND 2147483647 OR gridY NOT BETWEEN 0 AND 65535
                OR gridZ NOT BETWEEN 0 AND 65535 OR blockX NOT BETWEEN 0 AND 1024
                OR blockY NOT BETWEEN 0 AND 1024 OR blockZ NOT BETWEEN 0 AND 64,
            false
        ) AS beyond_limits
    FROM kernels
    WHERE NOT ends_before_start(start, "end")  -- a damaged record: left out, as every figure
) AS k
LEFT JOIN fp_paths AS p
    ON $paths AND p.global_pid = k.global_pid AND p.correlation_id = k.correlationId
