-- _selection_size: how many GPU operations a work selection holds. One row.
-- Parameters: $selection BIGINT (a work_selection id).
-- Columns: operations BIGINT (distinct globalPid, correlationId pairs)
SELECT count(*) AS operations FROM work_selection WHERE selection_id = $selection
