-- stakeout_profiles: stakeout_spread, stakeout_log_histogram and stakeout_configs of some
-- kernels from one read of their launches (the report's stakeout of its top kernels: the
-- three queries read the kernel table three times, ~2.6 census times on a direct read of
-- 5M launches). The selected launches are held in memory (about 150 bytes each), so the
-- caller uses it only when they are few enough (tracelens.report.stakeoutview).
-- One row per part: `part` says which query's row it is; the other parts' columns are NULL.
--
-- Parameters:
--   $names       VARCHAR    kernel names (of $name_kind), as one JSON list
--                           (tracelens.trace.list_param)
--   $name_kind   VARCHAR    'demangled' | 'short'
--   $per_octave  BIGINT     histogram bins per doubling of duration
--
-- Columns (ns):
--   part      VARCHAR  'spread' | 'histogram' | 'configs'
--   rank      BIGINT   the row's place in its part, in that query's order (1 first)
--   name      VARCHAR  kernel name
--   spread:    launches, total_ns, min_ns, p10_ns, p50_ns, p90_ns, p99_ns, max_ns, cv,
--              devices, streams (as stakeout_spread)
--   histogram: bin, launches (as stakeout_log_histogram)
--   configs:   grid, block, registers, shared_bytes, launches, total_ns, avg_ns (as
--              stakeout_configs)
WITH sel AS (
    -- name_no: the name as a small number (ids that share a value share it): the held
    -- launches carry no text
    SELECT s.id, s.value AS name, dense_rank() OVER (ORDER BY s.value) AS name_no
    FROM strings AS s
    WHERE s.value IN (SELECT unnest(text_list($names)))
),
names AS (SELECT DISTINCT name_no, name FROM sel),
launches AS MATERIALIZED (
    SELECT sel.name_no, k."end" - k.start AS dur, k.deviceId, k.streamId,
           k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ,
           k.registersPerThread AS registers,
           coalesce(k.staticSharedMemory, 0) + coalesce(k.dynamicSharedMemory, 0) AS shared_bytes
    FROM kernels AS k
    JOIN sel ON sel.id = (CASE $name_kind WHEN 'short' THEN k.shortName ELSE k.demangledName END)
    -- a damaged record is left out, as filtered_kernels leaves it out of the three queries
    WHERE NOT ends_before_start(k.start, k."end")
),
spread AS (
    SELECT name_no, unnest(s)
    FROM (
        SELECT name_no, launch_spread(dur, deviceId, streamId) AS s
        FROM launches GROUP BY name_no
    )
),
histogram AS (
    SELECT name_no, floor(log2(greatest(dur, 1)) * $per_octave)::BIGINT AS bin,
           count(*) AS launches
    FROM launches
    GROUP BY name_no, bin
),
configs AS (
    SELECT
        name_no,
        gridX || '×' || gridY || '×' || gridZ AS grid,
        blockX || '×' || blockY || '×' || blockZ AS block,
        registers,
        shared_bytes,
        count(*) AS launches,
        sum(dur)::BIGINT AS total_ns,
        avg(dur) AS avg_ns
    FROM launches
    GROUP BY name_no, gridX, gridY, gridZ, blockX, blockY, blockZ, registers, shared_bytes
)
SELECT 'spread' AS part, row_number() OVER (ORDER BY total_ns DESC, name) AS rank,
       * EXCLUDE (name_no)
FROM names JOIN spread USING (name_no)
UNION ALL BY NAME
SELECT 'histogram' AS part, row_number() OVER (ORDER BY name, bin) AS rank,
       * EXCLUDE (name_no)
FROM names JOIN histogram USING (name_no)
UNION ALL BY NAME
SELECT 'configs' AS part,
       row_number() OVER (ORDER BY name, launches DESC, total_ns DESC, grid, block) AS rank,
       * EXCLUDE (name_no)
FROM names JOIN configs USING (name_no)
ORDER BY part DESC, rank
