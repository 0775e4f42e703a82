-- memory_size_summary: bytes moved per memory operation, the semantics of `nsys stats
-- --report cuda_gpu_mem_size_sum` (2022.4: `gpumemsizesum`). One row per operation
-- (memcpy kind, or memset), ordered by total bytes, largest first (ties by operation).
-- Operations are labelled as in memory_time_summary.sql. MB are 10^6 bytes, as nsys.
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
--   total_mb     DOUBLE   sum of sizes, MB, rounded to 0.001
--   count        BIGINT   operations
--   avg_mb       DOUBLE   mean size, MB, 0.001
--   med_mb       DOUBLE   median size (mean of the middle two for an even count), MB, 0.001
--   min_mb       DOUBLE   smallest operation, MB, 0.001
--   max_mb       DOUBLE   largest operation, MB, 0.001
--   stddev_mb    DOUBLE   sample standard deviation (n - 1; 0 for one operation), MB, 0.001
--   total_bytes  BIGINT   sum of sizes, bytes (exact)
--   operation    VARCHAR  operation label
WITH ops AS (
    SELECT
        coalesce(k.label, '[CUDA memcpy kind ' || m.copyKind || ']') AS operation,
        m.bytes
    FROM filtered_memcpys($device, $pid, $stream, $start_ns, $end_ns, selection := $selection) AS m
    LEFT JOIN memcpy_labels AS k ON k.copyKind = m.copyKind
    UNION ALL
    SELECT '[CUDA memset]', bytes
    FROM filtered_memsets($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
),
per_op AS (
    SELECT
        operation,
        sum(bytes) AS total_bytes,
        count(*) AS count,
        avg(bytes) AS avg_bytes,
        median(bytes) AS med_bytes,
        min(bytes) AS min_bytes,
        max(bytes) AS max_bytes,
        coalesce(stddev_samp(bytes), 0) AS stddev_bytes
    FROM ops
    GROUP BY operation
)
SELECT
    round(total_bytes / 1e6, 3) AS total_mb,
    count,
    round(avg_bytes / 1e6, 3) AS avg_mb,
    round(med_bytes / 1e6, 3) AS med_mb,
    round(min_bytes / 1e6, 3) AS min_mb,
    round(max_bytes / 1e6, 3) AS max_mb,
    round(stddev_bytes / 1e6, 3) AS stddev_mb,
    total_bytes::BIGINT AS total_bytes,
    operation
FROM per_op
ORDER BY total_bytes DESC, operation
