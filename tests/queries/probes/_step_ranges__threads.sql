-- Probe of queries/_step_ranges.sql's step_ranges: the closed ranges matching 'step \d+'
-- (not top-level only), numbered per thread: thread 100's three, thread 101's two, process
-- 200's one; the open one and 'other' are not listed.
SELECT pid_of(globalTid) AS pid, tid_of(globalTid) AS tid, range, step, start, "end", closed,
       label
FROM step_ranges('step [0-9]+', 'regex', false)
ORDER BY range
