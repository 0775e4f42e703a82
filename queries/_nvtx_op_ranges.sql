-- _nvtx_op_ranges: every GPU operation (kernel, memcpy, memset, CUDA graph replay traced at
-- graph level), the rows tracelens.nvtx_sweep turns into the relation nvtx_op_ranges by
-- giving each the innermost projected NVTX range that holds the CUDA API call which launched
-- it (nvtx_call_ranges: the tightest range on the call's thread that contains the whole
-- call, nsys's rule). The ranges holding an operation are that range and its ancestors
-- (nvtx_paths.stack).
--
-- Columns (the sweep adds global_tid and range_id, see below):
--   kind           VARCHAR  'kernel', 'memcpy', 'memset' or 'graph'
--   globalPid      BIGINT   the operation's globalPid
--   correlationId  BIGINT   its correlationId
--   device         BIGINT   CUDA device
--   start, "end"   BIGINT   when it ran on the GPU, ns from session start
--   name_id        BIGINT   kernels: demangledName (StringIds), else NULL
--   short_id       BIGINT   kernels: shortName, else NULL
-- Columns nvtx_op_ranges adds:
--   global_tid     BIGINT   the thread of the launching call (NULL: no call recorded)
--   range_id       BIGINT   innermost range holding the call (NULL: none)
SELECT kind, globalPid, correlationId, device, start, "end", name_id, short_id
FROM gpu_operations()
