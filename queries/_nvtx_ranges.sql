-- _nvtx_ranges: the table macro nvtx_ranges(), every NVTX range as nsys stats 2022.4 names
-- and times it (nvtx_sum, nvtx_gpu_proj_trace); installed by Trace.load_nvtx_text (and
-- load_nvtx_spans, before nvtx_text exists). The macros name their table through
-- query_table, so it is bound when they are called, not when they are created.
--
-- A range is a push/pop or start/end range (eventType 59, 60, and nsys's own 70, 71). One
-- left open at the end of the capture (end NULL) lasts, as in nsys, until the latest
-- timestamp of any NVTX event. Its name is nsys's: the registered string (StringIds[textId])
-- or else the free text, prefixed with 'domain:' when the range is in a named domain (the
-- text of that process's eventType 75 event for the domainId; the earliest when repeated).
--
-- Also the scalar macro torch_label(name): a PyTorch range label without its per-call
-- arguments, the op itself ('aten::mm, seq = 12, op_id = 991065, sizes = [[2, 3]]' ->
-- 'aten::mm', as torch.autograd.profiler.emit_nvtx writes them); other labels unchanged.
-- And nvtx_group(group_by, name, path): the group a range counts in for nvtx's --group
-- (nvtx_gpu_projection_summary, _nvtx_range_groups): its path for 'path', its op
-- (torch_label of its name) for 'torch', else its name.
--
-- nvtx_ranges(source := 'nvtx_text') reads the table named `source`, one with nvtx_text's
-- columns: nvtx_held_text (Trace.load_nvtx_held_text) names the ranges that hold GPU work
-- without every range's text (there an open range's "end" is that table's latest time).
--
-- Columns of nvtx_ranges():
--   range_id        BIGINT   the NVTX_EVENTS rowid (nsys's RangeId)
--   event_type      BIGINT   59, 60, 70 or 71
--   style           VARCHAR  'PushPop' | 'StartEnd'
--   start           BIGINT   range start, ns from session start
--   "end"           BIGINT   range end, ns (open ranges: the latest NVTX timestamp)
--   closed          BOOLEAN  false when the capture ended with the range open
--   global_tid      BIGINT   the thread that opened it (globalTid)
--   same_thread     BOOLEAN  it ended on the thread that opened it (nsys projects only these)
--   domain_id       BIGINT   NVTX domain id (NULL or 0: the default domain)
--   label           VARCHAR  the range's own text (registered string first, as nsys)
--   name            VARCHAR  'domain:label' in a named domain, else label
-- Also the table macro thread_ranges(), for finding steps (steps_by_range,
-- steps_range_families): every closed range on a known thread, as the label matchers see it.
-- Columns: start, "end" (ns), globalTid, label (its text, else its registered string),
-- top_level (BOOLEAN: inside no other range of its thread, i.e. no range of the thread
-- that starts earlier, or at the same time and is longer, ends at or after its end).
-- A range left open encloses as in nvtx_ranges() (to the latest NVTX timestamp), so a
-- capture cut inside 'generate' finds the steps the full capture finds; it is not listed
-- itself (cut by the capture end, it is no complete step, as the period route drops the
-- incomplete period after the last complete one) unless open := true, which lists it
-- with that end and closed false (steps_range_open names such step ranges as left out).
-- Column closed (BOOLEAN): false for a range left open.
CREATE OR REPLACE TEMP MACRO thread_ranges(source := 'nvtx_text', open := false) AS TABLE
    WITH last_ts AS (
        SELECT greatest(max(start), max("end")) AS ts FROM query_table(source)
    )
    SELECT start, "end", globalTid, label,
           enclosing_end IS NULL OR enclosing_end < "end" AS top_level, closed
    FROM (
        SELECT n.start, coalesce(n."end", (SELECT ts FROM last_ts)) AS "end",
               n."end" IS NOT NULL AS closed, n.globalTid, coalesce(n.text, s.value) AS label,
               max(coalesce(n."end", (SELECT ts FROM last_ts))) OVER (
                   PARTITION BY n.globalTid
                   ORDER BY n.start, coalesce(n."end", (SELECT ts FROM last_ts)) DESC,
                            n."end" IS NOT NULL
                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS enclosing_end
        FROM query_table(source) AS n
        LEFT JOIN strings AS s ON s.id = n.textId
        WHERE is_nvtx_range_type(n.eventType) AND n.globalTid IS NOT NULL
    )
    WHERE open OR closed;
CREATE OR REPLACE TEMP MACRO torch_label(name) AS
    regexp_replace(name, ',\s*(seq|op_id|sizes|input_op_ids|input_dims|stack)\s*=.*$', '', 's');
CREATE OR REPLACE TEMP MACRO nvtx_group(group_by, name, path) AS
    CASE group_by WHEN 'path' THEN path WHEN 'torch' THEN torch_label(name) ELSE name END;
CREATE OR REPLACE TEMP MACRO nvtx_ranges(source := 'nvtx_text') AS TABLE
    WITH domains AS (
        SELECT domainId AS id, pid_of(globalTid) AS pid, arg_min(text, start) AS domain
        FROM query_table(source)
        WHERE eventType = 75
        GROUP BY domainId, pid_of(globalTid)
    ),
    last_ts AS (
        SELECT greatest(max(start), max("end")) AS ts FROM query_table(source)
    )
    SELECT
        n.row_id AS range_id,
        n.eventType AS event_type,
        CASE WHEN n.eventType IN (59, 70) THEN 'PushPop' ELSE 'StartEnd' END AS style,
        n.start,
        coalesce(n."end", (SELECT ts FROM last_ts)) AS "end",
        n."end" IS NOT NULL AS closed,
        n.globalTid AS global_tid,
        ends_on_own_thread(n.globalTid, n.endGlobalTid) AS same_thread,
        n.domainId AS domain_id,
        coalesce(s.value, n.text) AS label,
        CASE WHEN d.domain IS NOT NULL THEN d.domain || ':' || coalesce(s.value, n.text)
             ELSE coalesce(s.value, n.text) END AS name
    FROM query_table(source) AS n
    LEFT JOIN strings AS s ON s.id = n.textId
    LEFT JOIN domains AS d ON d.id = n.domainId AND d.pid = pid_of(n.globalTid)
    WHERE is_nvtx_range_type(n.eventType);
