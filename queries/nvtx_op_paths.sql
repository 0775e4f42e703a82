-- nvtx_op_paths: every GPU operation with the NVTX range path of the call that launched it
-- (the innermost projected range holding the call, and its names from the top range down),
-- for comparing where in the program two runs' work comes from. Needs nvtx_op_ranges and
-- nvtx_paths (tracelens.nvtx builds them). Ordered by start, then device.
-- Columns:
--   kind           VARCHAR  'kernel', 'memcpy', 'memset' or 'graph'
--   globalPid      BIGINT   the operation's globalPid
--   correlationId  BIGINT   its correlationId
--   device         BIGINT   CUDA device
--   start, "end"   BIGINT   when it ran, ns from session start
--   range_id       BIGINT   innermost range holding the launching call (NULL: none)
--   path           VARCHAR  range names from the top down, ' / ' between (NULL: none)
SELECT o.kind, o.globalPid, o.correlationId, o.device, o.start, o."end", o.range_id, t.path
FROM nvtx_op_ranges AS o
LEFT JOIN nvtx_paths AS t ON t.range_id = o.range_id
ORDER BY o.start, o.device, o.correlationId
