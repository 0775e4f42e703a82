-- fingerprint_paths: the document's path entries: the units (fingerprint_units) of one
-- device and region with the same sequence collapse into one entry with the steps they
-- cover. A unit with more than $block launches is compared by its head and its block
-- digests; its entry keeps those and the launches per variant of its first unit.
--
-- Inputs: the temp tables fp_units (fingerprint_units) and fp_path_regions
-- (fingerprint_path_regions: each region's labels, joined back here).
--
-- Parameters:
--   $block   BIGINT   launches per block (fingerprint.toml: limits.block_launches)
--
-- Rows: in the order of each entry's first unit (device, step with no step first, first
-- correlation id).
--
-- Columns:
--   device    BIGINT     CUDA device ordinal
--   region    VARCHAR[]  NVTX labels below the step, outermost first; [] outside any range
--   steps     BIGINT[]   the steps the entry covers, ascending ([]: outside steps)
--   launches  BIGINT     kernel launches of its first unit
--   sequence  BIGINT[]   the variant ids (fingerprint_units) of the first $block launches,
--                        in launch order
--   blocks    STRUCT(code_sum BIGINT, position_sum BIGINT)[]
--                        the block digests (fingerprint_units); NULL up to $block launches
--   counts    BIGINT[][] [variant id, launches] per variant of its first unit, by id; NULL
--                        up to $block launches
WITH units AS (
    SELECT
        u.*,
        CASE WHEN u.launches > $block THEN u.blocks END AS digests,
        row_number() OVER (ORDER BY u.device, u.step NULLS FIRST, u.first_correlation) AS rank
    FROM fp_units AS u
)
SELECT
    u.device,
    coalesce(r.region, []::VARCHAR[]) AS region,
    coalesce(list_sort(list(step) FILTER (WHERE step IS NOT NULL)), []::BIGINT[]) AS steps,
    arg_min(launches, rank) AS launches,
    head AS sequence,
    digests AS blocks,
    CASE
        WHEN digests IS NOT NULL
            THEN list_transform(arg_min(counts, rank), lambda c: [c.vid, c.launches])
    END AS counts
FROM units AS u
LEFT JOIN (
    SELECT region_id, any_value(region) AS region FROM fp_path_regions GROUP BY region_id
) AS r USING (region_id)
GROUP BY u.device, u.region_id, r.region, u.head, u.digests
ORDER BY min(u.rank)
