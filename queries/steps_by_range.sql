-- steps_by_range: the steps of the matching NVTX ranges, numbered per thread (by start,
-- 1-based: step N is the Nth matching range of each thread, so the ranks of a
-- multi-process job share step numbers whichever started first, and two threads of one
-- process with their own step ranges are not interleaved; a range inside another of its
-- thread with the same label is part of it: step_ranges in _step_ranges.sql), projected on the GPU per device: the GPU
-- operations (kernels, memcpys, memsets, graph replays) whose launching API call starts
-- inside one of the step's ranges on the range's thread (when matching ranges nest, inside
-- the innermost: the latest-starting one still open). One row per step and device that
-- has such work, by step then device.
-- Needs the nvtx_text table (Trace.load_nvtx_text()).
--
-- Parameters:
--   $pattern    VARCHAR  an RE2 regex matched in full when $match = 'regex' (filters.glob_regex
--                        of a label glob); a family (label with digit runs as '#', see
--                        steps_range_families) when $match = 'family'
--   $match      VARCHAR  'regex' | 'family'
--   $top_level  BOOLEAN  only ranges inside no other range of their thread
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter
--
-- Columns (times in ns from session start):
--   step          BIGINT  1-based index of the range among its thread's matching ranges
--   ranges        BIGINT  steps' ranges (with or without GPU work), of every process, but
--                         for those of a thread that, on no GPU, is the one whose ranges
--                         launched the most there in its process (left out: a data
--                         loader's own 'step N' ranges)
--   device        BIGINT  CUDA device ordinal
--   start_ns      BIGINT  start of the step's first GPU operation on the device
--   end_ns        BIGINT  end of its last GPU operation on the device
--   cpu_start_ns  BIGINT  start of the NVTX range (of the step's ranges that launched work
--                         on the device, the earliest start)
--   cpu_end_ns    BIGINT  end of the NVTX range (of those ranges, the latest end)
--   duration_ns   BIGINT  end_ns - start_ns
--   busy_ns       BIGINT  union of the step's GPU operations on the device
--   kernels       BIGINT  kernels of the step on the device
--   kernel_ns     BIGINT  their summed duration
--   global_tid    BIGINT  the range's thread (globalTid; of those ranges, the first's)
WITH steps AS (
    SELECT range, step, start, "end", globalTid FROM step_ranges($pattern, $match, $top_level)
),
keyed_ranges AS (SELECT range AS step, start, "end", globalTid FROM steps),
-- a call goes to the latest-starting step range of its thread open when it starts (ranges
-- may nest)
calls AS (
    SELECT r.correlationId, pid_of(r.globalTid) AS pid, m.step AS range
    FROM runtime_calls AS r
    ASOF JOIN step_marks('keyed_ranges') AS m
        ON m.globalTid = r.globalTid AND m.key <= r.start * 3 + 1
    WHERE m.step IS NOT NULL
),
-- part: one number per (step, device): DuckDB sorts a window partitioned by one key many
-- times faster than one partitioned by two.
launched AS (
    SELECT s.step, c.range, w.deviceId AS device, s.step * 1048576 + w.deviceId AS part,
           w.kind, w.start, w."end"
    FROM gpu_work($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS w
    JOIN calls AS c ON c.correlationId = w.correlationId AND c.pid = pid_of(w.globalPid)
    JOIN steps AS s ON s.range = c.range
),
-- on each GPU, of each process, the thread whose step ranges launched the most work there
-- defines the steps (the first-starting of equals); the process's other threads' ranges
-- are left out, unless they define another GPU's (a loop thread per GPU). A process none of
-- whose work has a known device: its thread whose ranges launched the most.
held AS (
    SELECT s.globalTid, o.device, count(*) AS held
    FROM launched AS o
    JOIN steps AS s ON s.range = o.range
    GROUP BY s.globalTid, o.device
),
firsts AS (SELECT globalTid, min(range) AS first FROM steps GROUP BY globalTid),
launching AS (
    SELECT DISTINCT globalTid
    FROM (
        SELECT globalTid
        FROM held JOIN firsts USING (globalTid)
        WHERE device IS NOT NULL
        QUALIFY row_number() OVER (
            PARTITION BY globalTid >> 24, device ORDER BY held DESC, first) = 1
        UNION ALL
        SELECT globalTid
        FROM (SELECT globalTid, sum(held) AS held FROM held GROUP BY globalTid)
        JOIN firsts USING (globalTid)
        WHERE globalTid >> 24 NOT IN (
            SELECT globalTid >> 24 FROM held WHERE device IS NOT NULL)
        QUALIFY row_number() OVER (PARTITION BY globalTid >> 24 ORDER BY held DESC, first) = 1
    )
),
ops AS (
    SELECT * FROM launched
    WHERE range IN (SELECT range FROM steps WHERE globalTid IN (SELECT globalTid FROM launching))
),
-- Busy time: in start order, an operation adds what it runs past the latest end of the
-- step's earlier operations on the device (their union, in one pass).
busy AS (
    SELECT step, device,
           sum(greatest(0, "end" - greatest(start, coalesce(prev_end, start)))) AS busy_ns
    FROM (
        SELECT step, device, start, "end", max("end") OVER (
            PARTITION BY part ORDER BY start, "end"
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
        FROM ops
    )
    GROUP BY step, device
),
per_device AS (
    SELECT step, device, min(start) AS start_ns, max("end") AS end_ns,
           count(*) FILTER (WHERE kind = 'kernel') AS kernels,
           coalesce(sum("end" - start) FILTER (WHERE kind = 'kernel'), 0) AS kernel_ns
    FROM ops
    GROUP BY step, device
),
-- the step's CPU span on the device: its ranges that launched work there
cpu AS (
    SELECT o.step, o.device, min(s.start) AS cpu_start_ns, max(s."end") AS cpu_end_ns,
           arg_min(s.globalTid, s.range) AS global_tid
    FROM (SELECT DISTINCT step, device, range FROM ops) AS o
    JOIN steps AS s ON s.range = o.range
    GROUP BY o.step, o.device
),
-- the ranges of the threads that define the steps, and of processes none of whose
-- ranges launched work
counted AS (
    SELECT count(*) AS ranges
    FROM steps
    WHERE globalTid IN (SELECT globalTid FROM launching)
       OR globalTid >> 24 NOT IN (SELECT globalTid >> 24 FROM launching)
)
SELECT
    p.step,
    (SELECT ranges FROM counted) AS ranges,
    p.device,
    p.start_ns,
    p.end_ns,
    c.cpu_start_ns,
    c.cpu_end_ns,
    (p.end_ns - p.start_ns)::BIGINT AS duration_ns,
    b.busy_ns::BIGINT AS busy_ns,
    p.kernels,
    p.kernel_ns::BIGINT AS kernel_ns,
    c.global_tid
FROM per_device AS p
JOIN busy AS b USING (step, device)
JOIN cpu AS c USING (step, device)
ORDER BY p.step, p.device
