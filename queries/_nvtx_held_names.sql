-- _nvtx_held_names: the NVTX ranges that hold GPU work (nvtx_held) with their names and
-- styles (nvtx_ranges over nvtx_held_text, their labels), from which tracelens.nvtx builds
-- each one's stack and path down the parent links (see _nvtx_paths.sql).
--
-- Columns:
--   range_id   BIGINT   nsys's RangeId (NVTX_EVENTS rowid)
--   parent_id  BIGINT   RangeId of the enclosing range, NULL at the top
--   name       VARCHAR  nsys's range name ('domain:label' in a named domain)
--   style      VARCHAR  'PushPop' | 'StartEnd'
SELECT u.range_id, u.parent_id, r.name, r.style
FROM nvtx_held AS u
JOIN nvtx_ranges(source := 'nvtx_held_text') AS r ON r.range_id = u.range_id
