-- Probe of queries/_step_ranges.sql's step_ranges with open := true: the top-level ranges
-- of the family 'step #', the one left open too (closed false, ending at the latest NVTX
-- timestamp, numbered after its thread's closed ones); 'step 2.5' inside thread 100's
-- 'step 2' is not top-level, and the inner 'step 1' inside thread 101's 'step 1' (same
-- label) is part of it.
SELECT pid_of(globalTid) AS pid, tid_of(globalTid) AS tid, range, step, start, "end", closed,
       label
FROM step_ranges('step #', 'family', true, open := true)
ORDER BY range
