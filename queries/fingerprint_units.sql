-- fingerprint_units: the numerical path of a trace, one row per unit = (device, step,
-- region): how many kernels it launched, the variants of the first $block of them in launch
-- order, an order-sensitive digest per block of $block launches, and the launches of each
-- variant. The one sort over every launch is here, keyed by integers only: the region's
-- labels stay in fp_path_regions, a variant is two (fingerprint_launches) and its id for the
-- launches listed (Python reads ids, not keys). Lists
-- are sorted after they are aggregated (list_sort), not by list(... ORDER BY ...): an
-- ordered aggregate keeps a sort per group, and a trace with NVTX op ranges has a unit per
-- op and step (200k units ran DuckDB out of memory). The body of the temp table fp_units.
--
-- Inputs: fp_unit_launches (fingerprint_launch_steps) and the temp table fp_path_regions
-- (fingerprint_path_regions; empty without NVTX paths).
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
--   region_id          BIGINT     fp_path_regions.region_id; NULL: no NVTX range below the
--                                 step
--   launches           BIGINT     kernel launches of the unit
--   first_correlation  BIGINT     correlation id of its first launch (orders the units)
--   head               BIGINT[]   the variant ids of the first $block launches, in launch
--                                 order: ids number the distinct (variant_hi, variant_lo)
--                                 (fingerprint_launches) in order, from 0, as the
--                                 document's variants do
--   blocks             STRUCT(code_sum BIGINT, position_sum BIGINT)[]
--                                 per block, in order: the sum of the launches' codes, and
--                                 the sum of code * (position in block + 1) mod 2^31-1
--   counts             STRUCT(vid BIGINT, variant HUGEINT, launches BIGINT)[]
--                                 launches per variant, by id; variant: variant_hi * 2^63 +
--                                 variant_lo (fingerprint_variants unpacks it)
WITH ordered AS MATERIALIZED (
    SELECT
        l.device,
        l.step,
        r.region_id,
        row_number() OVER (
            PARTITION BY l.device, l.step, r.region_id
            ORDER BY l.correlation_id, l.start, l.code
        ) - 1 AS pos,
        l.variant_hi,
        l.variant_lo,
        l.code,
        l.correlation_id
    FROM fp_unit_launches AS l
    LEFT JOIN fp_path_regions AS r
        ON r.device = l.device AND r.step IS NOT DISTINCT FROM l.step AND r.path_id = l.path_id
),
per_block AS (
    SELECT
        device,
        step,
        region_id,
        pos // $block AS block,
        count(*) AS launches,
        min(correlation_id) AS first_correlation,
        sum(code)::BIGINT AS code_sum,
        sum((code * (pos % $block + 1)) % 2147483647)::BIGINT AS position_sum
    FROM ordered
    GROUP BY device, step, region_id, block
),
totals AS (
    SELECT
        device,
        step,
        region_id,
        sum(launches)::BIGINT AS launches,
        min(first_correlation) AS first_correlation,
        list_transform(
            list_sort(list({'block': block, 'code_sum': code_sum, 'position_sum': position_sum})),
            lambda b: {'code_sum': b.code_sum, 'position_sum': b.position_sum}
        ) AS blocks
    FROM per_block
    GROUP BY device, step, region_id
),
counted AS MATERIALIZED (
    SELECT device, step, region_id, variant_hi, variant_lo, count(*) AS launches
    FROM ordered
    GROUP BY device, step, region_id, variant_hi, variant_lo
),
variant_ids AS (
    -- the document's variant ids: (variant_hi, variant_lo) in order, from 0
    SELECT variant_hi, variant_lo, row_number() OVER (ORDER BY variant_hi, variant_lo) - 1 AS vid
    FROM (SELECT DISTINCT variant_hi, variant_lo FROM counted)
),
heads AS (
    SELECT
        o.device,
        o.step,
        o.region_id,
        list_transform(list_sort(list({'pos': o.pos, 'vid': v.vid})), lambda h: h.vid) AS head
    FROM ordered AS o
    JOIN variant_ids AS v ON v.variant_hi = o.variant_hi AND v.variant_lo = o.variant_lo
    WHERE o.pos < $block
    GROUP BY o.device, o.step, o.region_id
),
counts AS (
    SELECT
        c.device,
        c.step,
        c.region_id,
        list_sort(list({
            'vid': v.vid,
            'variant': (c.variant_hi::HUGEINT << 63) + c.variant_lo,
            'launches': c.launches
        })) AS counts
    FROM counted AS c
    JOIN variant_ids AS v ON v.variant_hi = c.variant_hi AND v.variant_lo = c.variant_lo
    GROUP BY c.device, c.step, c.region_id
)
SELECT t.device, t.step, t.region_id, t.launches, t.first_correlation, h.head, t.blocks, c.counts
FROM totals AS t
JOIN heads AS h
    ON h.device = t.device
    AND h.step IS NOT DISTINCT FROM t.step
    AND h.region_id IS NOT DISTINCT FROM t.region_id
JOIN counts AS c
    ON c.device = t.device
    AND c.step IS NOT DISTINCT FROM t.step
    AND c.region_id IS NOT DISTINCT FROM t.region_id
ORDER BY t.device, t.step NULLS FIRST, t.first_correlation
