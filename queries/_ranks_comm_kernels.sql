-- _ranks_comm_kernels: (re)creates the temp table rank_comm_kernels that ranks_collectives
-- and ranks_gpu_time join: the StringIds ids of the communication kernels' demangled names
-- and the collective each runs. Run after registering rank_comm_names(name VARCHAR, kind
-- VARCHAR), the names the category rules call communication (classified in Python, once
-- per distinct name), so no kernel row is read here: only the strings table.
-- Parameters: none.
-- Table rank_comm_kernels columns:
--   name_id  BIGINT   StringIds id (every id a name has, if the export repeats a string)
--   kind     VARCHAR  collective (AllReduce, AllGather, ...)
CREATE OR REPLACE TEMP TABLE rank_comm_kernels AS
SELECT s.id AS name_id, c.kind
FROM rank_comm_names AS c
JOIN strings AS s ON s.value = c.name
