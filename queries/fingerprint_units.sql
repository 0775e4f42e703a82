-- fingerprint_units: the numerical path of a trace, one row per unit = (device, step,
-- region): how many kernels it launched, the first $block of them in launch order, an
-- order-sensitive digest per block of $block launches, and the launches of each variant.
-- All aggregation over launches happens here: Python sees units, never launches.
--
-- Input: the temp view fp_unit_launches (fingerprint_launches, or fingerprint_launch_steps
-- when the trace has steps).
--
-- Launch order is the order of the CUDA calls (correlation id), then GPU start, then the
-- variant's code: GPU timing jitter does not reorder it.
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
--   head               STRUCT(norm_id, grid_x, grid_y, grid_z, block_x, block_y, block_z)[]
--                                 the variants (BIGINT fields) of the first $block launches
--   blocks             STRUCT(code_sum BIGINT, position_sum BIGINT)[]
--                                 per block, in order: the sum of the launches' codes, and
--                                 the sum of code * (position in block + 1) mod 2^31-1
--   counts             STRUCT(variant STRUCT(...), launches BIGINT)[]   launches per variant
WITH ordered AS (
    SELECT
        device,
        step,
        region,
        {
            'norm_id': norm_id, 'grid_x': grid_x, 'grid_y': grid_y, 'grid_z': grid_z,
            'block_x': block_x, 'block_y': block_y, 'block_z': block_z
        } AS variant,
        code,
        correlation_id,
        row_number() OVER (
            PARTITION BY device, step, region ORDER BY correlation_id, start, code
        ) - 1 AS pos
    FROM fp_unit_launches
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
        list(variant ORDER BY pos) FILTER (WHERE pos < $block) AS head,
        histogram(variant) AS counts
    FROM ordered
    GROUP BY device, step, region, block
),
per_variant AS (
    SELECT device, step, region, entry.key AS variant, sum(entry.value)::BIGINT AS launches
    FROM (SELECT device, step, region, unnest(map_entries(counts)) AS entry FROM per_block)
    GROUP BY ALL
),
variant_lists AS (
    SELECT
        device,
        step,
        region,
        list({'variant': variant, 'launches': launches} ORDER BY variant) AS counts
    FROM per_variant
    GROUP BY ALL
)
SELECT
    b.device,
    b.step,
    b.region,
    sum(b.launches)::BIGINT AS launches,
    min(b.first_correlation) AS first_correlation,
    first(b.head ORDER BY b.block) AS head,
    list({'code_sum': b.code_sum, 'position_sum': b.position_sum} ORDER BY b.block) AS blocks,
    any_value(c.counts) AS counts
FROM per_block AS b
JOIN variant_lists AS c
    ON c.device = b.device AND c.step IS NOT DISTINCT FROM b.step AND c.region = b.region
GROUP BY b.device, b.step, b.region
ORDER BY b.device, b.step NULLS FIRST, first_correlation
