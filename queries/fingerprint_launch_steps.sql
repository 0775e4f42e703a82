-- fingerprint_launch_steps: fp_launches (fingerprint_launches) with each launch's step. The
-- body of the temp table fp_unit_launches (the launches are read once and kept: every later
-- fingerprint query reads this table, not the trace); no parameters.
--
-- A launch belongs to the step whose GPU window on its device holds its start (NULL when
-- none does).
--
-- Inputs: the view fp_launches, and the temp table fp_steps(device, step, start_ns, end_ns,
-- cpu_start_ns, cpu_end_ns) (ns from session start; the CPU span NULL for period steps).
--
-- Columns: those of fingerprint_launches, with
--   step    BIGINT     1-based step number, or NULL
SELECT l.* REPLACE (CASE WHEN l.start <= st.end_ns THEN st.step END AS step)
FROM fp_launches AS l
ASOF LEFT JOIN fp_steps AS st ON st.device = l.device AND l.start >= st.start_ns
