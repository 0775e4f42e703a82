-- nvtx_op_paths_none: nvtx_op_paths for an export without NVTX ranges or CUDA API calls:
-- every GPU operation, none in a range. Same columns and order as nvtx_op_paths.
SELECT kind, globalPid, correlationId, device, start, "end", NULL::BIGINT AS range_id,
       NULL::VARCHAR AS path
FROM gpu_operations()
ORDER BY start, device, correlationId
