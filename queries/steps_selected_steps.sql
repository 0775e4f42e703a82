-- steps_selected_steps: the steps that hold some of a work selection's operations, from the
-- temp table step_work (globalPid, correlationId, step: the GPU work of some steps, from
-- steps_range_work or steps_window_work), filled by tracelens.stepwork: how many of the
-- asked steps hold work of the asked process or stream (--pid/--stream with --per-step).
-- Parameters:
--   $selection  BIGINT  a work_selection id
-- Columns (ordered by step):
--   step  BIGINT  a step number that holds selected work
SELECT DISTINCT w.step
FROM step_work AS w
SEMI JOIN work_selection AS s
    ON s.selection_id = $selection AND s.globalPid = w.globalPid
    AND s.correlationId = w.correlationId
ORDER BY w.step
