-- _nvtx_paths_more: adds the rows of nvtx_path_rows (one more level of the held ranges,
-- registered by tracelens.nvtx after _nvtx_paths created the table from the roots) to the
-- temp table nvtx_paths; its columns are _nvtx_paths's (range_id BIGINT, name VARCHAR,
-- style VARCHAR, stack VARCHAR, path VARCHAR). A level at a time, each level's frame freed
-- once copied: all levels at once held every level twice (the 10M-range fixture's 2M held
-- ranges: +0.4 GB at the run's peak).
INSERT INTO nvtx_paths
SELECT range_id, name, style, stack, path
FROM nvtx_path_rows
