-- steps_range_list: the NVTX ranges that are steps, one per matching range, numbered by
-- start (then thread, then the longer first), 1-based: as steps_by_range numbers them. A
-- matching range inside another of its thread with the same label is part of that step,
-- not a step (outer_step_ranges in _step_marks.sql: PyTorch's nested ProfilerStep#N).
-- tracelens.steps_ranges projects them on the GPU (steps_range_marks, steps_range_ops).
-- Needs the nvtx_text table (Trace.load_nvtx_text()).
--
-- Parameters:
--   $pattern    VARCHAR  an RE2 regex matched in full when $match = 'regex'; a family
--                        (label with digit runs as '#') when $match = 'family'
--   $match      VARCHAR  'regex' | 'family'
--   $top_level  BOOLEAN  only ranges inside no other range of their thread
--
-- Columns (by step):
--   step       BIGINT  1-based index of the range among the steps
--   start      BIGINT  range start, ns from session start
--   end        BIGINT  range end, ns
--   globalTid  BIGINT  the range's thread
WITH matching AS (
    SELECT start, "end", globalTid, label
    FROM thread_ranges()
    WHERE (NOT $top_level OR top_level)
      AND CASE $match
          WHEN 'family' THEN regexp_replace(label, '[0-9]+', '#', 'g') = $pattern
          ELSE regexp_full_match(label, $pattern)
      END
)
SELECT row_number() OVER (ORDER BY start, globalTid, "end" DESC) AS step, start, "end",
       globalTid
FROM outer_step_ranges('matching')
ORDER BY step
