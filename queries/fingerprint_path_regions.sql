-- fingerprint_path_regions: the region of each distinct (device, step, NVTX path id) of the
-- launches, worked out once per such key, not per launch. A region is the labels of the
-- launching call's enclosing NVTX ranges, outermost first, without the ranges that enclose
-- the step's whole CPU span (the step's own range and any outer one), so the same layer has
-- the same region in every step. A launch in no step (before the first step, or in a step
-- the capture started or ended inside: a range cut by the capture is no step) goes without
-- the ranges of the families (label with digit runs as '#', as the step search groups them)
-- of those that enclose a step's whole CPU span on its device: the launches of a last step
-- whose range never ended have the region they have in a complete step ('forward', not
-- 'train_step > forward', a region the whole capture does not hold). Labels come normalized
-- from fp_path_lists (torch_label: a PyTorch op range's per-call arguments, seq, op_id,
-- sizes, ..., dropped), so the calls of one op in one place share a region. Keys whose
-- region is empty are left out (their launches have no region id).
-- The body of the temp table fp_path_regions; no parameters.
--
-- Inputs: the temp tables fp_region_keys (device, step, path_id: the distinct keys of the
-- launches that have a path, tracelens.fingerprint.units), fp_path_lists
-- (fingerprint_range_paths) and fp_steps (device, step, start_ns, end_ns, cpu_start_ns,
-- cpu_end_ns; the CPU span NULL for period steps, whose launches keep every range).
--
-- Columns:
--   device     BIGINT     CUDA device ordinal
--   step       BIGINT     1-based step number, or NULL
--   path_id    BIGINT     fingerprint_launches.path_id
--   region_id  BIGINT     the region's id, 1-based, in the order of the label lists (the
--                         same list has the same id on every device and step)
--   region     VARCHAR[]  NVTX labels below the step, outermost first
WITH step_keys AS (
    SELECT k.device, k.path_id, st.cpu_start_ns, st.cpu_end_ns
    FROM fp_region_keys AS k
    JOIN fp_steps AS st ON st.device = k.device AND st.step = k.step
    WHERE st.cpu_start_ns IS NOT NULL
),
step_families AS (
    SELECT device, list(DISTINCT regexp_replace(r.label, '[0-9]+', '#', 'g')) AS families
    FROM (
        SELECT s.device, s.cpu_start_ns, s.cpu_end_ns, unnest(l.ranges) AS r
        FROM step_keys AS s
        JOIN fp_path_lists AS l ON l.path_id = s.path_id
    )
    WHERE r.start <= cpu_start_ns AND r."end" >= cpu_end_ns
    GROUP BY device
),
regions AS (
    SELECT
        k.device,
        k.step,
        k.path_id,
        list_transform(
            CASE
                WHEN k.step IS NULL AND f.families IS NOT NULL THEN list_filter(
                    l.ranges,
                    lambda r: NOT list_contains(
                        f.families, regexp_replace(r.label, '[0-9]+', '#', 'g')
                    )
                )
                WHEN st.cpu_start_ns IS NULL THEN l.ranges
                ELSE list_filter(
                    l.ranges,
                    lambda r: NOT (r.start <= st.cpu_start_ns AND r."end" >= st.cpu_end_ns)
                )
            END,
            lambda r: r.label
        ) AS region
    FROM fp_region_keys AS k
    JOIN fp_path_lists AS l ON l.path_id = k.path_id
    LEFT JOIN fp_steps AS st ON st.device = k.device AND st.step = k.step
    LEFT JOIN step_families AS f ON f.device = k.device
)
SELECT device, step, path_id, dense_rank() OVER (ORDER BY region) AS region_id, region
FROM regions
WHERE len(region) > 0
ORDER BY device, step NULLS FIRST, path_id
