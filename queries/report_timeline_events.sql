-- report_timeline_events: individual GPU events (kernels, memcpys, memsets) that overlap the
-- window [$t0, $t1], earliest first, at most $limit of them (the report asks for one more
-- than it draws, to know whether the window had to be aggregated instead).
--
-- Parameters:
--   $t0, $t1    BIGINT   window, ns from session start
--   $limit      BIGINT   maximum rows
--   $name_kind  VARCHAR  'demangled' | 'short'
--
-- Columns:
--   kind      VARCHAR  'kernel' | 'memcpy' | 'memset'
--   device    BIGINT   CUDA device ordinal
--   stream    BIGINT   CUDA stream id
--   start     BIGINT   ns from session start
--   "end"     BIGINT   ns from session start
--   name_id   BIGINT   kernel name id (NULL for memory operations)
--   detail    BIGINT   copyKind for memcpys, NULL otherwise
--   bytes     BIGINT   bytes moved or set (NULL for kernels)
--   grid      VARCHAR  'X×Y×Z' for kernels
--   block     VARCHAR  'X×Y×Z' for kernels
SELECT * FROM (
    SELECT 'kernel' AS kind, deviceId AS device, streamId AS stream, start, "end",
           CASE $name_kind WHEN 'short' THEN shortName ELSE demangledName END AS name_id,
           NULL::BIGINT AS detail, NULL::BIGINT AS bytes,
           gridX || '×' || gridY || '×' || gridZ AS grid,
           blockX || '×' || blockY || '×' || blockZ AS block
    FROM kernels WHERE "end" >= $t0 AND start <= $t1
    UNION ALL
    SELECT 'memcpy', deviceId, streamId, start, "end", NULL, copyKind, bytes, NULL, NULL
    FROM memcpys WHERE "end" >= $t0 AND start <= $t1
    UNION ALL
    SELECT 'memset', deviceId, streamId, start, "end", NULL, NULL, bytes, NULL, NULL
    FROM memsets WHERE "end" >= $t0 AND start <= $t1
)
ORDER BY start, device, stream, "end"
LIMIT $limit
