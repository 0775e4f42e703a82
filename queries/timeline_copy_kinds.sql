-- timeline_copy_kinds: the memcpy kind labels the export itself carries (nsys 2022.4 and
-- newer write ENUM_CUDA_MEMCPY_OPER). Run only when that table exists.
--
-- Columns:
--   id     BIGINT   copyKind
--   label  VARCHAR  its label ('Host-to-Device', 'Unified Device-to-Host', ...)
SELECT CAST(id AS BIGINT) AS id, CAST(label AS VARCHAR) AS label
FROM sqlite_scan(getvariable('trace_path'), 'ENUM_CUDA_MEMCPY_OPER')
ORDER BY id
