-- _step_ranges: the NVTX ranges that are steps, the one rule steps_range_list,
-- steps_by_range and steps_range_open share (they restated it before). Installed with
-- _nvtx_ranges.sql by Trace.load_nvtx_text(), after it: it reads its thread_ranges.
--
-- Table macro outer_step_ranges(ranges): the ranges of the relation named `ranges` (a CTE
-- of the calling query: start, "end" (ns), closed (BOOLEAN), globalTid, label; the NVTX
-- ranges whose label matches the steps' pattern) that are steps: those inside no earlier
-- (or equal; at one start and end, a closed one is after an open one) range of their
-- thread with the same label. Such a range is part of the step around it, not a step of
-- its own: PyTorch can open ProfilerStep#N twice, one inside the other, and numbered apart
-- they doubled the step numbers while each call went to the inner range and left the
-- outer one empty. Matching ranges with other labels may nest (step_marks: a call goes to
-- the innermost). Columns: those of `ranges`. Rows in no order.
CREATE OR REPLACE TEMP MACRO outer_step_ranges(ranges) AS TABLE
    SELECT * EXCLUDE (same_label_end)
    FROM (
        SELECT *,
               max("end") OVER (
                   PARTITION BY globalTid, label ORDER BY start, "end" DESC, closed
                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS same_label_end
        FROM query_table(ranges)
    )
    WHERE same_label_end IS NULL OR same_label_end < "end";
-- Table macro step_ranges(pattern, match, top_only, source := 'nvtx_text', open := false):
-- the ranges of thread_ranges(source) (every range on a known thread, as the label matchers
-- see it; with open, also those the capture stopped inside, lasting to the latest NVTX
-- timestamp) whose label matches and, with top_only, that lie inside no other range of
-- their thread; of those, the ones inside no earlier (or equal) range of their thread with
-- the same label (outer_step_ranges), numbered. Rows in no order.
--   pattern    VARCHAR  an RE2 regex matched in full when match = 'regex'; a family (label
--                       with digit runs as '#', as steps_range_families) when 'family'
--   match      VARCHAR  'regex' | 'family'
--   top_only   BOOLEAN  only ranges inside no other range of their thread
--   source     VARCHAR  the relation the NVTX events are read from (nvtx_text's columns)
--   open       BOOLEAN  also the ranges left open (closed false)
--
-- Columns:
--   range      BIGINT   1-based index of the range among all of them, by start, thread, the
--                       longer first, an open range after a closed one alike (what
--                       step_marks keys on)
--   step       BIGINT   1-based step number: the index of the range among its thread's in the
--                       same order. Numbered per thread, so step N is the Nth iteration of
--                       each rank of a multi-process job whichever started first, and two
--                       threads of one process with their own step ranges are not
--                       interleaved into one sequence (tracelens.steps_ranges leaves out
--                       the ranges of a thread that launched no GPU work in them)
--   start      BIGINT   range start, ns from session start
--   end        BIGINT   range end, ns (an open range: the latest NVTX timestamp)
--   closed     BOOLEAN  false for a range the capture stopped inside (only with open)
--   globalTid  BIGINT   the range's thread
--   label      VARCHAR  the range's label (its text, else its registered string)
CREATE OR REPLACE TEMP MACRO step_ranges(
    pattern, match, top_only, source := 'nvtx_text', open := false
) AS TABLE
    WITH matching AS (
        SELECT start, "end", closed, globalTid, label
        FROM thread_ranges(source := source, open := open)
        WHERE (NOT top_only OR top_level)
          AND CASE match
              WHEN 'family' THEN regexp_replace(label, '[0-9]+', '#', 'g') = pattern
              -- the regex only when matching by one: DuckDB compiles a constant pattern
              -- whichever branch runs, and a family ('\x1b[#m...') need not be a regex
              ELSE regexp_full_match(label, CASE match WHEN 'regex' THEN pattern ELSE '' END)
          END
    )
    SELECT row_number() OVER (ORDER BY start, globalTid, "end" DESC, closed) AS range,
           row_number() OVER (PARTITION BY globalTid ORDER BY start, "end" DESC, closed)
               AS step,
           start, "end", closed, globalTid, label
    FROM outer_step_ranges('matching');
