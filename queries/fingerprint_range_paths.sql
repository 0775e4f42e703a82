-- fingerprint_range_paths: per NVTX range on a thread whose ranges nest, the ranges that
-- enclose the work launched inside it, outermost first: the range itself and its
-- ancestors (nvtx_tree's parent links, followed from the roots down once per range, not
-- per call). These are the ranges nsys projects (nvtx_tree: those that end on the thread
-- that opened them; one left open at the end of the capture lasts to the last NVTX event,
-- so a capture cut inside a range still has its work inside it). Plus the paths
-- fingerprint_nvtx_overlaps computed per call on the other threads, and the paths of the
-- calls made after the last NVTX event inside ranges left open (fp_open_paths,
-- fingerprint_open_range_paths), under their own (negative) ids. Labels are the nvtx command's names (nvtx_ranges(): the registered
-- string, else the text, prefixed 'domain:' in a named domain), normalized by torch_label
-- (_nvtx_ranges.sql: a PyTorch op range's per-call arguments, seq = N, op_id = N, sizes =
-- [...], are dropped; other labels are kept as they are).
--
-- Inputs: nvtx_tree, nvtx_ranges() (over nvtx_text), and the temp tables fp_overlap_threads
-- (fingerprint_overlap_threads), fp_overlap_paths (fingerprint_nvtx_overlaps) and
-- fp_open_paths (fingerprint_open_range_paths).
--
-- Columns:
--   path_id  BIGINT   nvtx_tree.range_id, or fp_overlap_paths.path_id or
--                     fp_open_paths.path_id (< 0)
--   ranges   STRUCT(label VARCHAR, start BIGINT, "end" BIGINT)[]
--                     outermost first (the tree's parent links: by start, then the
--                     longest first; of identical ranges the first is the parent):
--                     label, start and end in ns from session start
WITH RECURSIVE
nodes AS MATERIALIZED (
    SELECT t.range_id, t.parent_id,
           {'label': torch_label(coalesce(r.name, '')), 'start': t.start, 'end': t."end"} AS own
    FROM nvtx_tree AS t
    JOIN nvtx_ranges() AS r ON r.range_id = t.range_id
    WHERE t.global_tid NOT IN (SELECT global_tid FROM fp_overlap_threads)
),
chains AS (
    SELECT range_id, [own] AS ranges FROM nodes WHERE parent_id IS NULL
    UNION ALL
    SELECT n.range_id, list_append(c.ranges, n.own)
    FROM chains AS c JOIN nodes AS n ON n.parent_id = c.range_id
)
-- The chain is already outermost first (each range appended under its parent); sorting it
-- by (start, longest first, label) put identical nested ranges in name order (r0, r1, r10,
-- r2, ...), not the tree's (of two identical ranges, the first is the parent).
SELECT range_id::BIGINT AS path_id, ranges
FROM chains
UNION ALL
SELECT path_id, ranges FROM fp_overlap_paths
UNION ALL
SELECT path_id, any_value(ranges) FROM fp_open_paths GROUP BY path_id
