-- _nvtx_op_spans: every GPU operation (kernel, memcpy, memset, CUDA graph replay traced at
-- graph level) with only what the NVTX GPU projection needs of it: which call launched it
-- and when it ran. tracelens.nvtx_sweep reads these for the projection (per range: first
-- start, last end, operations); _nvtx_op_ranges reads the operations' other columns only
-- for the callers that show them (nvtx --kernels, the NVTX paths of every operation). On
-- the 5M-kernel benchmark these four columns read in 1.1 CPU s, the eight in 2.1.
--
-- Columns:
--   globalPid      BIGINT  the operation's globalPid
--   correlationId  BIGINT  its correlationId
--   start, "end"   BIGINT  when it ran on the GPU, ns from session start
SELECT globalPid, correlationId, start, "end"
FROM gpu_operations()
