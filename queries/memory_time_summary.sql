-- memory_time_summary: GPU time per memory operation, the semantics of `nsys stats --report
-- cuda_gpu_mem_time_sum` (2022.4: `gpumemtimesum`). One row per operation (memcpy kind, or
-- memset), ordered by total time, largest first (ties by operation).
--
-- Operations are labelled as nsys 2022.4 prints them, from memcpys.copyKind (unified-memory
-- migrations have copyKind 11-13 whatever their migrationCause): '[CUDA memcpy HtoD]',
-- '[CUDA memcpy DtoH]', ..., '[CUDA memcpy PtoP]', '[CUDA Unified Memory memcpy HtoD]',
-- '[CUDA Unified Memory memcpy DtoH]', '[CUDA Unified Memory memcpy DtoD]', and
-- '[CUDA memset]' for every memset. A copyKind outside 0-13 (none is known) is kept as
-- '[CUDA memcpy kind N]' where nsys would drop the row.
--
-- Parameters (NULL means "no filter"):
--   $device            BIGINT   CUDA device ordinal (deviceId)
--   $pid               BIGINT   operating-system process id
--   $stream            BIGINT   CUDA stream id
--   $start_ns, $end_ns BIGINT   time window, ns from session start: as nsys, keep an
--                               operation that ends at or after $start_ns and starts before
--                               $end_ns (in_window in _shared.sql)
--   $selection         BIGINT   a work_selection id (--nvtx, --step): only the GPU work in it
--
-- Columns:
--   time_pct   DOUBLE   share of the time of all rows, %, rounded to 0.1
--   total_ns   BIGINT   sum of durations, ns
--   count      BIGINT   operations
--   avg_ns     DOUBLE   mean duration, ns, rounded to 0.1
--   med_ns     DOUBLE   median duration (mean of the middle two for an even count), ns, 0.1
--   min_ns     BIGINT   shortest operation, ns
--   max_ns     BIGINT   longest operation, ns
--   stddev_ns  DOUBLE   sample standard deviation (n - 1; 0 for one operation), ns, 0.1
--   operation  VARCHAR  operation label, as above
WITH ops AS (
    SELECT
        coalesce(k.label, '[CUDA memcpy kind ' || m.copyKind || ']') AS operation,
        m."end" - m.start AS dur_ns
    FROM filtered_memcpys($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS m
    LEFT JOIN memcpy_labels AS k ON k.copyKind = m.copyKind
    UNION ALL
    SELECT '[CUDA memset]', "end" - start
    FROM filtered_memsets($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
),
per_op AS (
    SELECT operation, duration_stats(dur_ns) AS stats
    FROM ops
    GROUP BY operation
)
SELECT * RENAME (instances AS count)
FROM (SELECT unnest(nsys_stats(stats)), operation FROM per_op)
ORDER BY total_ns DESC, operation
