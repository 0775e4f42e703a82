-- fingerprint_variants: the kernel variants the units counted (fingerprint_units), with the
-- ids the units use: a variant is a distinct (normalized name, grid, block), and the ids
-- follow (norm_id, grid, block) in ascending order, a missing dimension first (the order of
-- the packed integer: variant_hi * 2^63 + variant_lo, fingerprint_launches). No parameters.
--
-- Input: the temp table fp_variants (vid, variant_hi, variant_lo, launches: one row per
-- variant, tracelens.fingerprint.units).
--
-- Columns:
--   vid                        BIGINT   variant id (fingerprint_units), 0-based, in that order
--   variant                    HUGEINT  the packed variant: variant_hi * 2^63 + variant_lo
--   norm_id                    BIGINT   fp_names.norm_id of the normalized kernel name
--   grid_x, grid_y, grid_z     BIGINT   grid, blocks (NULL when the export lacks them)
--   block_x, block_y, block_z  BIGINT   block, threads
--   launches                   BIGINT   kernel launches of the variant
WITH counted AS (
    SELECT vid, (variant_hi::HUGEINT << 63) + variant_lo AS variant, launches::BIGINT AS launches
    FROM fp_variants
)
SELECT
    vid,
    variant,
    (variant >> 95)::BIGINT AS norm_id,
    nullif(((variant >> 63) & 4294967295)::BIGINT, 0) - 1 AS grid_x,
    nullif(((variant >> 46) & 131071)::BIGINT, 0) - 1 AS grid_y,
    nullif(((variant >> 29) & 131071)::BIGINT, 0) - 1 AS grid_z,
    nullif(((variant >> 18) & 2047)::BIGINT, 0) - 1 AS block_x,
    nullif(((variant >> 7) & 2047)::BIGINT, 0) - 1 AS block_y,
    nullif((variant & 127)::BIGINT, 0) - 1 AS block_z,
    launches
FROM counted
ORDER BY vid
