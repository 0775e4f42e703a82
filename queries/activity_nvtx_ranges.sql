-- activity_nvtx_ranges: the NVTX ranges in the window [$t0, $t1) (in_window) that last at least
-- $min_ns, earliest first, at most $limit of them (ask for one more than will be drawn to
-- know whether some were left out): the ranges of nvtx_ranges(), as the nvtx command has
-- them (one left open at the end of the capture lasts until the latest NVTX timestamp).
-- Needs nvtx_ranges() (Trace.load_nvtx_text()).
--
-- Parameters:
--   $t0, $t1  BIGINT  window, ns from session start
--   $min_ns   BIGINT  shortest range kept, ns
--   $limit    BIGINT  maximum rows
--
-- Columns:
--   start  BIGINT   range start, ns from session start (CPU time)
--   "end"  BIGINT   range end, ns from session start
--   label  VARCHAR  the range's name ('domain:label' in a named domain; '' when it has none)
--   tid    BIGINT   globalTid of the thread that pushed it (NULL where the export lacks it)
SELECT n.start, n."end", coalesce(n.name, '') AS label, n.global_tid AS tid
FROM nvtx_ranges() AS n
WHERE in_window(n.start, n."end", $t0, $t1)
  AND n."end" - n.start >= $min_ns
ORDER BY n.start, n."end" DESC, tid, label
LIMIT $limit
