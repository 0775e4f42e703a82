-- _memcpy_labels: creates the temp table memcpy_labels, the operation label `nsys stats`
-- (2022.4, cuda_gpu_mem_*_sum) prints for each CUPTI copyKind. The loader runs this once per
-- connection; memory_time_summary, memory_size_summary and lineup_activities join it.
-- The one copy-kind vocabulary: Python reads these rows too (_resources.copy_kind_labels:
-- timeline, synth's short names, the diff), so every command names a copy kind alike.
-- Columns:
--   copyKind  BIGINT   CUPTI copyKind (ENUM_CUDA_MEMCPY_OPER)
--   label     VARCHAR  e.g. '[CUDA memcpy HtoD]', '[CUDA Unified Memory memcpy DtoH]'
CREATE TEMP TABLE memcpy_labels(copyKind BIGINT, label VARCHAR);
INSERT INTO memcpy_labels VALUES
    (0, '[CUDA memcpy Unknown]'),
    (1, '[CUDA memcpy HtoD]'),
    (2, '[CUDA memcpy DtoH]'),
    (3, '[CUDA memcpy HtoA]'),
    (4, '[CUDA memcpy AtoH]'),
    (5, '[CUDA memcpy AtoA]'),
    (6, '[CUDA memcpy AtoD]'),
    (7, '[CUDA memcpy DtoA]'),
    (8, '[CUDA memcpy DtoD]'),
    (9, '[CUDA memcpy HtoH]'),
    (10, '[CUDA memcpy PtoP]'),
    (11, '[CUDA Unified Memory memcpy HtoD]'),
    (12, '[CUDA Unified Memory memcpy DtoH]'),
    (13, '[CUDA Unified Memory memcpy DtoD]');
