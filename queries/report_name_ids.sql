-- report_name_ids: the StringIds ids that hold some names (one text may have several ids),
-- for report_stakeout_configs_export.sql, which SQLite runs on the export's own ids.
--
-- Parameters:
--   $names  VARCHAR  kernel names, as one JSON list
--                    (tracelens.trace.list_param)
--
-- Columns:
--   id    BIGINT   StringIds id
--   name  VARCHAR  its text
SELECT id, value AS name
FROM strings
WHERE value IN (SELECT unnest(text_list($names)))
ORDER BY id
