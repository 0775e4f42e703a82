-- _select_work: store a work selection: the rows of the relation `selected_rows` (globalPid,
-- correlationId: GPU operations) under a new id in work_selection, keeping only those in
-- selection $within when it is not NULL (selections intersect: --nvtx and --step together).
-- Parameters:
--   $selection_id  BIGINT  the new selection's id (nextval('work_selection_ids'))
--   $within        BIGINT  an existing selection to intersect with, or NULL
INSERT INTO work_selection
SELECT DISTINCT $selection_id, s.globalPid, s.correlationId
FROM selected_rows AS s
WHERE $within IS NULL OR (s.globalPid, s.correlationId) IN (
    SELECT (w.globalPid, w.correlationId) FROM work_selection AS w WHERE w.selection_id = $within)
