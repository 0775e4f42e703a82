-- steps_range_list: the NVTX ranges that are steps, one per matching range, numbered as
-- steps_by_range numbers them: per thread, by start (then the longer first), 1-based, so
-- step N is the Nth iteration of each rank of a multi-process job, whichever rank started
-- first, and of each thread of one process that runs its own step ranges (not one
-- sequence of both interleaved). A matching range inside another of its thread with the
-- same label is part of that step, not a step (step_ranges of _step_ranges.sql, the rule
-- steps_by_range and steps_range_open share: PyTorch's nested ProfilerStep#N).
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
--   step       BIGINT  1-based step number: the index of the range among its thread's in
--                      the same order
--   start      BIGINT  range start, ns from session start
--   end        BIGINT  range end, ns
--   globalTid  BIGINT  the range's thread
SELECT range, step, start, "end", globalTid
FROM step_ranges($pattern, $match, $top_level)
ORDER BY range
