-- _nvtx_matched_ranges: what an --nvtx pattern matches, one definition for every query
-- over the matched ranges (nvtx_matching_ranges counts them, nvtx_selected_work selects
-- the work launched in them, util_projection projects them onto the GPU); installed with
-- nvtx_ranges() by Trace.load_nvtx_text().
--
-- Scalar macro:
--   nvtx_label_matches(label, name, label_re)  BOOLEAN  the range's label or its
--       domain-qualified name (nvtx_ranges()' label, name) matches label_re in full:
--       filters.glob_regex of the --nvtx glob, an RE2 regex (linear in the label; DuckDB's
--       GLOB backtracks on many *)
--
-- Table macro nvtx_matched_ranges(label_re): the matching ranges nsys projects (those that
-- end on the thread that opened them), one row per thread and start (ranges of a thread
-- that start together are one: the longest), each with its reach: a call [s, e] of the
-- thread lies wholly inside some matching range exactly when the reach of the last row
-- starting at or before s is >= e (an ASOF join, one sorted pass per thread, never a
-- range x call join). Rows in no order.
-- Columns:
--   global_tid  BIGINT  the thread that opened the ranges (globalTid)
--   start       BIGINT  their start, ns from session start
--   "end"       BIGINT  the latest end of the ranges starting there, ns (open: as
--                       nvtx_ranges(), the latest NVTX timestamp)
--   reach_end   BIGINT  the latest end of the thread's matching ranges that start at or
--                       before `start`, ns
CREATE OR REPLACE TEMP MACRO nvtx_label_matches(label, name, label_re) AS
    regexp_full_match(label, label_re) OR regexp_full_match(name, label_re);
CREATE OR REPLACE TEMP MACRO nvtx_matched_ranges(label_re) AS TABLE
    SELECT global_tid, start, "end",
           max("end") OVER (PARTITION BY global_tid ORDER BY start ROWS UNBOUNDED PRECEDING)
               AS reach_end
    FROM (
        SELECT global_tid, start, max("end") AS "end"
        FROM nvtx_ranges()
        WHERE same_thread AND nvtx_label_matches(label, name, label_re)
        GROUP BY global_tid, start
    );
