-- util_launch_calls: the CUDA runtime API calls by what names the GPU work each launched
-- (launched_by in _shared.sql: the process and correlation id) with their thread and
-- start, and nothing else: util_calls.sql's rows without the end and the synchronizing flag, which
-- util_call_figures.sql gives from the few synchronizing calls and an aggregate. For a
-- trace read from Parquet (a cache entry, a parquetdir), where each column read costs its
-- own decoding: 3 columns of the 5M calls of the 5M-kernel benchmark ~0.13 CPU s, util_calls'
-- 5 ~0.24. Read directly, every row is converted whatever the columns, and util_calls' one
-- read is cheaper than this plus util_call_figures. Unordered.
--
-- Columns:
--   global_tid      BIGINT  nsys globalTid of the calling thread (its process: pid_of)
--   correlation_id  BIGINT  CUPTI correlation id (NULL when the export has none)
--   start           BIGINT  call start, ns from session start
SELECT
    r.globalTid::BIGINT AS global_tid,
    r.correlationId::BIGINT AS correlation_id,
    r.start::BIGINT AS start
FROM runtime_calls AS r
