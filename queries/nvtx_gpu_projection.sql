-- nvtx_gpu_projection: NVTX ranges projected onto the GPU, one row per range that launched
-- GPU work (`nsys stats --report nvtx_gpu_proj_trace`; 2022.4: nvtxgpuproj); the columns
-- of nvtx_projection (see _nvtx_projection.sql), which tracelens.nvtx builds first.
-- Ordered by projected start, then longest projection first, then RangeId.
SELECT * FROM nvtx_projection
ORDER BY proj_start_ns, proj_duration_ns DESC, range_id
