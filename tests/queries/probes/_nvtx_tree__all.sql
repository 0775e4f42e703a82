-- Probe of queries/_nvtx_tree.sql: the nvtx_tree table it creates.
SELECT range_id, tid_of(global_tid) AS tid, start, "end", parent_id, level, depth
FROM nvtx_tree
ORDER BY range_id
