-- _nvtx_projection: creates the temp table nvtx_projection, NVTX ranges projected onto the GPU, the semantics of `nsys stats
-- --report nvtx_gpu_proj_trace` (2022.4: nvtxgpuproj): one row per range that launched GPU
-- work, from the start of the first operation it holds to the end of the last. A range holds
-- the operations whose launching API call lies inside it on its thread, its nested ranges'
-- included. Needs nvtx_tree, nvtx_op_ranges and nvtx_paths (tracelens.nvtx
-- builds them).
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
CREATE OR REPLACE TEMP TABLE nvtx_projection AS
WITH direct AS (
    SELECT range_id, min(start) AS first_ns, max("end") AS last_ns,
           count(DISTINCT (globalPid, correlationId)) AS ops
    FROM nvtx_op_ranges
    WHERE range_id IS NOT NULL
    GROUP BY range_id
),
held AS (
    SELECT CAST(a.id AS BIGINT) AS range_id, min(d.first_ns) AS first_ns,
           max(d.last_ns) AS last_ns, sum(d.ops) AS ops
    FROM direct AS d
    JOIN nvtx_paths AS t ON t.range_id = d.range_id
    CROSS JOIN unnest(string_split(t.stack[2:], ':')) AS a(id)
    GROUP BY 1
),
children AS (
    SELECT t.parent_id AS range_id, count(*) AS children
    FROM held AS h JOIN nvtx_tree AS t ON t.range_id = h.range_id
    WHERE t.parent_id IS NOT NULL
    GROUP BY 1
)
SELECT
    n.name,
    h.first_ns AS proj_start_ns,
    h.last_ns - h.first_ns AS proj_duration_ns,
    t.start AS start_ns,
    t."end" - t.start AS duration_ns,
    n.style,
    pid_of(t.global_tid) AS pid,
    tid_of(t.global_tid) AS tid,
    h.ops::BIGINT AS gpu_ops,
    t.level,
    coalesce(c.children, 0) AS children,
    t.range_id,
    t.parent_id,
    n.stack,
    n.path
FROM held AS h
JOIN nvtx_tree AS t ON t.range_id = h.range_id
JOIN nvtx_paths AS n ON n.range_id = h.range_id
LEFT JOIN children AS c ON c.range_id = h.range_id
