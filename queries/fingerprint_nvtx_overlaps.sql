-- fingerprint_nvtx_overlaps: for each CUDA API call that launched a kernel on a thread whose
-- NVTX ranges do not nest (fp_overlap_threads, fingerprint_overlap_threads), the ranges on
-- its thread that enclose it, outermost first: the call's NVTX path. The ranges are those
-- nsys projects, as nvtx_tree has them for the other threads (nvtx_ranges() that end on
-- the thread that opened them; one left open at the end of the capture lasts to the last
-- NVTX event). Calls inside no range are absent. Every other thread's calls take the sweep (fingerprint_nvtx_paths): this
-- join pairs each such call with every range of its thread that encloses it, so its cost is
-- bounded by (calls x enclosing ranges) on those threads only, zero on a trace of push/pop
-- ranges.
--
-- Inputs: nvtx_ranges() over the nvtx_text table (Trace.load_nvtx_text) and
-- fp_overlap_threads. Run with
-- merge_join_threshold = 0 (see _nvtx_innermost.sql: DuckDB then plans the two time
-- inequalities as an IEJoin).
--
-- The thread is folded into the times: each thread with NVTX ranges gets a band of its own
-- on one time axis (band = thread index x a span longer than the capture), so the IEJoin's
-- two inequalities alone pair a call only with the ranges of its own thread. (Testing the
-- thread after the IEJoin paired every call with the enclosing-in-time ranges of every
-- thread: 9 GB on 5M calls and 250k ranges on 8 threads.)
--
-- Parameters:
--   $band_ns  BIGINT  a span longer than any time in the trace (past the last range and call
--                     end), ns: the width of one thread's band
--
-- Columns:
--   path_id         BIGINT   an id of the call's path, negative (-1, -2, ... in the order of
--                            process and correlation id), apart from nvtx_tree's range ids
--   global_pid      BIGINT   the launching process (globalTid with the thread bits cleared:
--                            its kernels' globalPid)
--   correlation_id  BIGINT   correlation id shared by the call and the GPU work it launched
--   ranges          STRUCT(label VARCHAR, start BIGINT, "end" BIGINT)[]
--                            the enclosing ranges, outermost first (by start, then the
--                            longest first): label (nvtx_ranges().name, normalized by
--                            torch_label as in fingerprint_range_paths), start and end in
--                            ns from session start (open ranges: the last NVTX event)
SELECT
    -row_number() OVER (ORDER BY c.global_pid, c.correlation_id) AS path_id,
    c.global_pid,
    c.correlation_id,
    list(
        {'label': torch_label(coalesce(n.name, '')), 'start': n.start, 'end': n."end"}
        ORDER BY n.start, n."end" DESC, torch_label(coalesce(n.name, ''))
    ) AS ranges
FROM (
    SELECT f.global_pid, f.correlation_id, t.band + f.c.start AS band_start,
           t.band + f.c."end" AS band_end
    FROM (
        SELECT globalTid - tid_of(globalTid) AS global_pid, correlationId AS correlation_id,
               arg_min({'global_tid': globalTid, 'start': start, 'end': "end"},
                       (eventClass, start)) AS c
        FROM runtime_calls
        WHERE (globalTid - tid_of(globalTid), correlationId) IN (
            SELECT (globalPid, correlationId) FROM kernels
        )
        GROUP BY 1, 2
    ) AS f
    JOIN (
        SELECT globalTid,
               (row_number() OVER (ORDER BY globalTid) - 1) * $band_ns AS band
        FROM (SELECT DISTINCT globalTid FROM nvtx_text WHERE globalTid IS NOT NULL)
    ) AS t ON t.globalTid = f.c.global_tid
    WHERE f.c.global_tid IN (SELECT global_tid FROM fp_overlap_threads)
) AS c
JOIN (
    SELECT n.name, n.start, n."end", t.band + n.start AS band_start,
           t.band + n."end" AS band_end
    FROM nvtx_ranges() AS n
    JOIN (
        SELECT globalTid,
               (row_number() OVER (ORDER BY globalTid) - 1) * $band_ns AS band
        FROM (SELECT DISTINCT globalTid FROM nvtx_text WHERE globalTid IS NOT NULL)
    ) AS t ON t.globalTid = n.global_tid
    WHERE n.same_thread
) AS n ON n.band_start <= c.band_start AND n.band_end >= c.band_end
GROUP BY c.global_pid, c.correlation_id
ORDER BY c.global_pid, c.correlation_id
