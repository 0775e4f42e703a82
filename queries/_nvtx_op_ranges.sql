-- _nvtx_op_ranges: creates the temp table nvtx_op_ranges: every GPU operation (kernel,
-- memcpy, memset, CUDA graph replay traced at graph level) with the innermost projected
-- NVTX range (nvtx_tree) that holds the CUDA API call which launched it: the tightest range
-- on the call's thread that contains the whole call, nsys's rule (nvtx_call_ranges). The
-- ranges holding an operation are that range and its ancestors (nvtx_tree.stack). Needs
-- nvtx_call_ranges (tracelens.nvtx builds it).
--
-- Columns of nvtx_op_ranges:
--   kind           VARCHAR  'kernel', 'memcpy', 'memset' or 'graph'
--   globalPid      BIGINT   the operation's globalPid
--   correlationId  BIGINT   its correlationId
--   device         BIGINT   CUDA device
--   start, "end"   BIGINT   when it ran on the GPU, ns from session start
--   name_id        BIGINT   kernels: demangledName (StringIds), else NULL
--   short_id       BIGINT   kernels: shortName, else NULL
--   global_tid     BIGINT   the thread of the launching call (NULL: no call recorded)
--   range_id       BIGINT   innermost range holding the call (NULL: none)
CREATE OR REPLACE TEMP TABLE nvtx_op_ranges AS
SELECT o.kind, o.globalPid, o.correlationId, o.device, o.start, o."end", o.name_id,
       o.short_id, h.global_tid, h.range_id
FROM gpu_operations() AS o
LEFT JOIN nvtx_call_ranges AS h
  ON h.global_pid = o.globalPid AND h.correlation_id = o.correlationId
