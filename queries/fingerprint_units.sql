-- fingerprint_units: the numerical path of a trace, one row per unit = (device, step,
-- region): how many kernels it launched, the variants of its first $block launches in
-- launch order, an order-sensitive digest per block of $block launches, the launches of
-- each variant, and the document entry it falls in. tracelens.fingerprint.units works these
-- out from one sorted read of the launches (fingerprint_launches) and hands them over as
-- the frame fp_unit_rows; this query gives them their SQL types and order. The body of the
-- temp table fp_units; no parameters.
--
-- Input: fp_unit_rows, the columns below.
--
-- Launch order is the order of the CUDA calls (correlation id, NULL last), then GPU start,
-- then the variant's code: GPU timing jitter does not reorder it.
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
--                                 document's variants do (fp_variants)
--   blocks             STRUCT(code_sum BIGINT, position_sum BIGINT)[]
--                                 per block, in order: the sum of the launches' codes, and
--                                 the sum of code * (position in block + 1) mod 2^31-1
--   counts             STRUCT(vid BIGINT, launches BIGINT)[]
--                                 launches per variant, by id
--   at                 BIGINT[]   where its launches are in the capture: at each stretch
--                                 of launches consecutive in both orders, its offset in the
--                                 unit and its place (in its step on the device, or in the
--                                 device's capture outside the steps; one process's and
--                                 host thread's launches after another's), both from 0,
--                                 one pair after another; NULL past AT_RUNS stretches
--                                 (tracelens.fingerprint.unitrows)
--   entry              BIGINT     the document entry (fingerprint_paths): step units of
--                                 one device and region with the same launches, head and,
--                                 past $block launches, the same blocks share it; a unit
--                                 outside the steps has its own; numbered from 0
--   rank               BIGINT     the unit's place in the order of (device, step NULLS
--                                 FIRST, first_correlation), from 1: the rows' order
SELECT
    device::BIGINT AS device,
    step::BIGINT AS step,
    region_id::BIGINT AS region_id,
    launches::BIGINT AS launches,
    first_correlation::BIGINT AS first_correlation,
    head::BIGINT[] AS head,
    blocks::STRUCT(code_sum BIGINT, position_sum BIGINT)[] AS blocks,
    counts::STRUCT(vid BIGINT, launches BIGINT)[] AS counts,
    "at"::BIGINT[] AS "at",
    entry::BIGINT AS entry,
    rank::BIGINT AS rank
FROM fp_unit_rows
ORDER BY rank
