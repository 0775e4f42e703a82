-- steps_range_list: the NVTX ranges that are steps, one per matching range, numbered as
-- steps_by_range numbers them: per process, by start (then thread, then the longer first),
-- 1-based, so step N is the Nth iteration of each process (each rank of a multi-process
-- job), whichever rank started first; in one process, every range is a step of its own.
-- A matching range inside another of its thread with the same label is part of that
-- step, not a step (outer_step_ranges in _step_marks.sql: PyTorch's nested ProfilerStep#N).
-- tracelens.steps_ranges projects them on the GPU (steps_range_marks, steps_range_ops).
-- Needs the nvtx_text table (Trace.load_nvtx_text()).
--
-- Parameters:
--   $pattern    VARCHAR  an RE2 regex matched in full when $match = 'regex'; a family
--                        (label with digit runs as '#') when $match = 'family'
--   $match      VARCHAR  'regex' | 'family'
--   $top_level  BOOLEAN  only ranges inside no other range of their thread
--
-- Columns (by range):
--   range      BIGINT  1-based index of the range among all the steps' ranges, by start,
--                      thread, the longer first (one per range: what step_marks keys on)
--   step       BIGINT  1-based step number: the index of the range among its process's
--                      (globalTid >> 24: the globalPid's bits) in the same order
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
SELECT row_number() OVER (ORDER BY start, globalTid, "end" DESC) AS range,
       row_number() OVER (PARTITION BY globalTid >> 24 ORDER BY start, globalTid, "end" DESC)
           AS step,
       start, "end", globalTid
FROM outer_step_ranges('matching')
ORDER BY range
