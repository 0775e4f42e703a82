-- fingerprint_paths: the document's path entries: the units (fingerprint_units) of one
-- device and region with the same sequence (one entry id) collapse into one entry with the
-- steps they cover; a unit outside the steps is an entry of its own (steps []), so the
-- entries' launches, each times its steps (once with none), add up to every launch. A unit with more than $block launches is compared by its head and its block
-- digests; its entry keeps those and the launches per variant of its first unit.
--
-- Inputs: the temp tables fp_units (fingerprint_units: each unit's entry and rank) and
-- fp_path_regions (fingerprint_path_regions: each region's labels, joined back here).
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
--   steps     BIGINT[]   the steps the entry covers, ascending ([]: the launches outside
--                        the steps, one unit)
--   launches  BIGINT     kernel launches of its first unit (each of its units has as many)
--   sequence  BIGINT[]   the variant ids (fingerprint_units) of the first $block launches,
--                        in launch order
--   blocks    STRUCT(code_sum BIGINT, position_sum BIGINT)[]
--                        the block digests (fingerprint_units); NULL up to $block launches
--   counts    BIGINT[][] [variant id, launches] per variant of its first unit, by id; NULL
--                        up to $block launches
--   at        BIGINT[][] where its first unit's launches are in the capture
--                        (fingerprint_units.at); NULL when not kept
WITH entries AS (
    -- on integers only: each entry's first unit and its steps (its lists are that unit's)
    SELECT
        entry,
        min(rank) AS first,
        coalesce(list_sort(list(step) FILTER (WHERE step IS NOT NULL)), []::BIGINT[]) AS steps
    FROM fp_units
    GROUP BY entry
)
SELECT
    u.device,
    coalesce(r.region, []::VARCHAR[]) AS region,
    e.steps,
    u.launches,
    u.head AS sequence,
    CASE WHEN u.launches > $block THEN u.blocks END AS blocks,
    CASE
        WHEN u.launches > $block THEN list_transform(u.counts, lambda c: [c.vid, c.launches])
    END AS counts,
    u."at"
FROM entries AS e
JOIN fp_units AS u ON u.rank = e.first
LEFT JOIN (
    SELECT region_id, any_value(region) AS region FROM fp_path_regions GROUP BY region_id
) AS r ON r.region_id = u.region_id
ORDER BY e.first
