-- _ranks_comm_kernels: (re)creates the temp table rank_comm_kernels that ranks_collectives
-- and ranks_gpu_time join: the StringIds ids of the communication kernels' demangled
-- names and the collective each runs, as trace.util() classifies them (util.work_params). Run after
-- registering _rank_comm_kernels(name_id BIGINT, kind VARCHAR).
-- Parameters: none.
-- Table rank_comm_kernels columns:
--   name_id  BIGINT   StringIds id of a communication kernel's demangled name
--   kind     VARCHAR  collective (AllReduce, AllGather, ..., other)
CREATE OR REPLACE TEMP TABLE rank_comm_kernels AS
SELECT DISTINCT name_id, kind FROM _rank_comm_kernels
