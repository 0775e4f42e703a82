-- _nvtx_projection: creates the temp view nvtx_projection, NVTX ranges projected onto the
-- GPU, the semantics of `nsys stats --report nvtx_gpu_proj_trace` (2022.4: nvtxgpuproj):
-- one row per range that launched GPU work, from the start of the first operation it holds
-- to the end of the last. A range holds the operations whose launching API call lies
-- inside it on its thread, its nested ranges' included; where ranges overlap, every range
-- the call lies in (nvtx_overlap_holders). Needs nvtx_held_totals (per range, what it
-- holds in all: range_id, first_ns, last_ns, ops, children; tracelens.nvtx_held carries
-- the sweep's nvtx_range_ops up the parent links), nvtx_held (the held ranges' nvtx_tree
-- rows) and nvtx_paths (tracelens.nvtx builds them).
-- A view, not a table: the query that reads it (one per report) computes the rows, and
-- they are never all held at once beside the sweep's tables (on the 10M-range fixture the
-- table held 0.38 GB, at the run's peak).
--
-- Columns of nvtx_projection:
--   name             VARCHAR  range name (nsys's: 'domain:label' in a named domain)
--   proj_start_ns    BIGINT   start of the first GPU operation, ns from session start
--   proj_duration_ns BIGINT   end of the last one minus proj_start_ns, ns
--   start_ns         BIGINT   the range's own (CPU) start, ns from session start
--   duration_ns      BIGINT   the range's own duration, ns
--   style            VARCHAR  'PushPop' | 'StartEnd'
--   pid, tid         BIGINT   process and thread of the range
--   gpu_ops          BIGINT   GPU operations held (distinct launching calls, as nsys)
--   level            BIGINT   nesting level, 0 at the top
--   children         BIGINT   ranges directly inside it that launched GPU work
--   range_id         BIGINT   RangeId (NVTX_EVENTS rowid)
--   parent_id        BIGINT   RangeId of the enclosing range (NULL at the top)
--   stack            VARCHAR  RangeIds from the top down, ':1:3:4' (nsys's RangeStack)
--   path             VARCHAR  range names from the top down, joined by ' / '
CREATE OR REPLACE TEMP VIEW nvtx_projection AS
SELECT
    n.name,
    h.first_ns AS proj_start_ns,
    h.last_ns - h.first_ns AS proj_duration_ns,
    t.start AS start_ns,
    t."end" - t.start AS duration_ns,
    n.style,
    pid_of(t.global_tid) AS pid,
    tid_of(t.global_tid) AS tid,
    h.ops AS gpu_ops,
    t.level::BIGINT AS level,
    h.children,
    h.range_id,
    t.parent_id,
    n.stack,
    n.path
FROM nvtx_held_totals AS h
JOIN nvtx_held AS t ON t.range_id = h.range_id
JOIN nvtx_paths AS n ON n.range_id = h.range_id
