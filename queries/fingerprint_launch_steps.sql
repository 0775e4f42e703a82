-- fingerprint_launch_steps: fp_launches (fingerprint_launches) with each launch's step and
-- its region relative to the step. Used as the body of a temp view; no parameters.
--
-- A launch belongs to the step whose GPU window on its device holds its start (NULL when
-- none does). Its region drops the NVTX ranges that enclose the step's whole CPU span (the
-- step's own range and any outer one), so the same layer has the same region in every step.
--
-- Inputs: the view fp_launches, and the temp table fp_steps(device, step, start_ns, end_ns,
-- cpu_start_ns, cpu_end_ns) (ns from session start; the CPU span NULL for period steps).
--
-- Columns: those of fingerprint_launches, with
--   step    BIGINT     1-based step number, or NULL
--   region  VARCHAR[]  NVTX labels below the step, outermost first
SELECT
    l.* REPLACE (
        CASE WHEN l.start <= st.end_ns THEN st.step END AS step,
        CASE
            WHEN l.ranges IS NULL OR l.start > st.end_ns OR st.cpu_start_ns IS NULL THEN l.region
            ELSE list_transform(
                list_filter(
                    l.ranges,
                    lambda r: NOT (r.start <= st.cpu_start_ns AND r."end" >= st.cpu_end_ns)
                ),
                lambda r: r.label
            )
        END AS region
    )
FROM fp_launches AS l
ASOF LEFT JOIN fp_steps AS st ON st.device = l.device AND l.start >= st.start_ns
