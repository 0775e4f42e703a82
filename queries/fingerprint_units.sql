-- fingerprint_units: the numerical path of a trace, one row per unit = (device, step,
-- region): how many kernels it launched, the first $block of them in launch order as
-- variant ids, and an order-sensitive digest per block of $block launches. All aggregation
-- happens here, so Python only sees units, never launches.
--
-- Inputs (temp tables the library creates before running it):
--   fp_variant_keys(name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, vid, code)
--       the variant id and its 31-bit code (a hash of the normalized name and the launch
--       configuration, stable across traces) for each (demangled name id, grid, block)
--   fp_steps(device, step, start_ns, end_ns, cpu_start_ns, cpu_end_ns)
--       the steps (GPU projection, and CPU span when known); may be empty
--   fp_paths(pid, correlation_id, ranges)   fingerprint_nvtx_paths; may be empty
--
-- A launch belongs to the step whose GPU window holds its start on its device (NULL when
-- none does). Its region is its NVTX path without the ranges that enclose the whole step
-- (the step's own range and any outer one), so the same layer in every step has the same
-- region; empty when no range encloses it. Launch order is the order of the CUDA calls
-- (correlation id), then GPU start and stream: GPU timing jitter does not reorder it.
--
-- Parameters:
--   $block   BIGINT   launches per block (fingerprint.toml: limits.block_launches)
--
-- Columns:
--   device             BIGINT     CUDA device ordinal
--   step               BIGINT     1-based step number; NULL outside steps (or no steps)
--   region             VARCHAR[]  NVTX labels, outermost first; [] outside any range
--   launches           BIGINT     kernel launches of the unit
--   first_correlation  BIGINT     correlation id of its first launch (orders the units)
--   head               BIGINT[]   variant ids of the first $block launches, in order
--   blocks             STRUCT(code_sum BIGINT, position_sum BIGINT)[]
--                                 per block, in order: the sum of the launches' codes and
--                                 the sum of code * (position in block + 1) mod 2^31-1
--   counts             STRUCT(vid BIGINT, launches BIGINT)[]   launches per variant, by vid
WITH launch AS (
    SELECT
        k.deviceId AS device,
        v.vid,
        v.code,
        CASE WHEN k.start <= st.end_ns THEN st.step END AS step,
        CASE
            WHEN p.ranges IS NULL THEN []::VARCHAR[]
            ELSE list_transform(
                list_filter(
                    p.ranges,
                    lambda r: NOT coalesce(
                        k.start <= st.end_ns
                        AND r.start <= st.cpu_start_ns
                        AND r."end" >= st.cpu_end_ns,
                        false
                    )
                ),
                lambda r: r.label
            )
        END AS region,
        k.correlationId AS correlation_id,
        k.start,
        k.streamId AS stream
    FROM kernels AS k
    JOIN fp_variant_keys AS v
        ON v.name_id = k.demangledName
        AND v.grid_x IS NOT DISTINCT FROM k.gridX
        AND v.grid_y IS NOT DISTINCT FROM k.gridY
        AND v.grid_z IS NOT DISTINCT FROM k.gridZ
        AND v.block_x IS NOT DISTINCT FROM k.blockX
        AND v.block_y IS NOT DISTINCT FROM k.blockY
        AND v.block_z IS NOT DISTINCT FROM k.blockZ
    ASOF LEFT JOIN fp_steps AS st ON st.device = k.deviceId AND k.start >= st.start_ns
    LEFT JOIN fp_paths AS p ON p.pid = pid_of(k.globalPid) AND p.correlation_id = k.correlationId
),
ordered AS (
    SELECT
        *,
        row_number() OVER (
            PARTITION BY device, step, region ORDER BY correlation_id, start, stream, vid
        ) - 1 AS pos
    FROM launch
),
per_block AS MATERIALIZED (
    SELECT
        device,
        step,
        region,
        pos // $block AS block,
        count(*) AS launches,
        min(correlation_id) AS first_correlation,
        sum(code)::BIGINT AS code_sum,
        sum((code * (pos % $block + 1)) % 2147483647)::BIGINT AS position_sum,
        list(vid ORDER BY pos) AS vids,
        histogram(vid) AS counts
    FROM ordered
    GROUP BY device, step, region, block
),
per_variant AS (
    SELECT device, step, region, entry.key AS vid, sum(entry.value)::BIGINT AS launches
    FROM (SELECT device, step, region, unnest(map_entries(counts)) AS entry FROM per_block)
    GROUP BY ALL
),
variant_lists AS (
    SELECT
        device,
        step,
        region,
        list({'vid': vid, 'launches': launches} ORDER BY vid) AS counts
    FROM per_variant
    GROUP BY ALL
)
SELECT
    b.device,
    b.step,
    b.region,
    sum(b.launches)::BIGINT AS launches,
    min(b.first_correlation) AS first_correlation,
    first(b.vids ORDER BY b.block) AS head,
    list({'code_sum': b.code_sum, 'position_sum': b.position_sum} ORDER BY b.block) AS blocks,
    any_value(c.counts) AS counts
FROM per_block AS b
JOIN variant_lists AS c
    ON c.device = b.device AND c.step IS NOT DISTINCT FROM b.step AND c.region = b.region
GROUP BY b.device, b.step, b.region
ORDER BY b.device, b.step NULLS FIRST, first_correlation
