-- util_sync_calls: the CUDA API calls that block the host until GPU work is done (names
-- matching $sync_regex, full match), per process by end time: what util's idle-gap causes
-- look up ("was the host blocked in a synchronizing call during the gap?").
--
-- Parameters:
--   $sync_regex  VARCHAR  CUDA API names (full match) that synchronize
--
-- Columns:
--   pid     BIGINT  operating-system pid of the calling process
--   start   BIGINT  call start, ns from session start
--   "end"   BIGINT  call end, ns from session start
SELECT pid_of(r.globalTid) AS pid, r.start, r."end"
FROM runtime_calls AS r
WHERE r.nameId IN (SELECT id FROM strings WHERE regexp_full_match(value, $sync_regex))
ORDER BY pid, r."end", r.start
