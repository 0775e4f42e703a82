-- Probe of queries/_nvtx_paths_more.sql: the rows it added to nvtx_paths, one level of the
-- held ranges at a time after _nvtx_paths created the table from the roots: every range
-- below a root (a stack of more than one id).
SELECT * FROM nvtx_paths
WHERE length(stack) - length(replace(stack, ':', '')) > 1
ORDER BY range_id
