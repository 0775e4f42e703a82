-- _bound_lists: a list bound as a query parameter, read from one JSON text
-- (tracelens.trace.list_param). DuckDB's Python client binds a Python list item by item,
-- each item (as each scalar parameter) with two failed attempts to import pandas (not
-- installed; ~0.1 ms an item): a timeline page's copy labels and edges made 34 of its 72
-- attempts, a report's stakeout names 32 of its 140. A text binds at once, and from_json
-- gives any text (commas, quotes, brackets, backslashes in kernel names) back exactly.
-- Installed once per connection by the loader.
--
-- Scalar macros (NULL text: NULL list; a JSON null item: a NULL item):
--   text_list(json_text)    VARCHAR[]  the list of texts json_text holds
--   bigint_list(json_text)  BIGINT[]   the list of integers json_text holds
CREATE OR REPLACE TEMP MACRO text_list(json_text) AS from_json(json_text, '["VARCHAR"]');
CREATE OR REPLACE TEMP MACRO bigint_list(json_text) AS from_json(json_text, '["BIGINT"]');
