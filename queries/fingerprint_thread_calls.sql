-- fingerprint_thread_calls: the CUDA API calls of every thread that is not its process's
-- busiest, with the thread's rank in its process, as the key a kernel launch finds its call
-- by (process and correlation id): tracelens.fingerprint.threads takes a process's launches
-- one thread after another in that rank's order. A process's threads are ranked by their
-- calls, the most first (a count the program fixes; which of two threads calls first is
-- the host scheduler's choice), then by id; the busiest is rank 0 and its calls, usually
-- nearly all, are not returned. Threads of one process that made as many calls as each
-- other are a tie group: the id the OS gave them orders them only until
-- tracelens.fingerprint.threads.untie ranks them by their own launch sequences, so the
-- calls of the busiest are returned too when it is in one. The calls' two columns are read
-- once (MATERIALIZED): counted per thread, then those of the other threads kept. Two
-- records of one call (runtime and driver) are one row. No parameters.
--
-- Columns:
--   global_pid      BIGINT   the calling process (globalTid with the thread bits cleared: a
--                            kernel's globalPid)
--   correlation_id  BIGINT   correlation id shared by the call and the GPU work it launched
--   thread          INTEGER  the calling thread's rank in its process, from 1 (0: the
--                            busiest, listed only when it ties)
--   tie             INTEGER  the calling thread's tie group, numbered from 1 over the
--                            trace by process, then calls (the most first); NULL: no other
--                            thread of its process made as many calls
WITH calls AS MATERIALIZED (
    SELECT globalTid AS global_tid, correlationId AS correlation_id
    FROM runtime_calls
    WHERE globalTid IS NOT NULL
),
threads AS (
    SELECT global_tid, global_tid - tid_of(global_tid) AS global_pid, count(*) AS calls
    FROM calls
    GROUP BY global_tid
),
ranked AS (
    SELECT global_tid, global_pid, calls,
           (row_number() OVER (PARTITION BY global_pid ORDER BY calls DESC, global_tid) - 1)::INTEGER
               AS thread,
           count(*) OVER (PARTITION BY global_pid, calls) > 1 AS tied
    FROM threads
),
grouped AS (
    SELECT global_tid, global_pid, thread,
           CASE WHEN tied
               THEN dense_rank() OVER (PARTITION BY tied ORDER BY global_pid, calls DESC)
           END::INTEGER AS tie
    FROM ranked
)
SELECT DISTINCT r.global_pid, c.correlation_id, r.thread, r.tie
FROM calls AS c
JOIN grouped AS r ON r.global_tid = c.global_tid
WHERE r.thread > 0 OR r.tie IS NOT NULL
ORDER BY r.global_pid, c.correlation_id
