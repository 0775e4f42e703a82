-- activity_operations: individual GPU operations (kernels, memcpys, memsets) in the window
-- [$t0, $t1) (in_window: nsys's rule), earliest first, at most $limit of them (ask for one
-- more than will be drawn to know whether the window must be aggregated instead, see
-- activity_bins).
--
-- Parameters:
--   $t0, $t1    BIGINT   window, ns from session start
--   $limit      BIGINT   maximum rows
--   $name_kind  VARCHAR  'demangled' | 'short'
--   $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter (NULL: all),
--               as the page's other sections apply it (a report narrowed by --nvtx, ...)
--
-- Columns:
--   kind      VARCHAR  'kernel' | 'memcpy' | 'memset'
--   device    BIGINT   CUDA device ordinal
--   stream    BIGINT   CUDA stream id
--   start     BIGINT   ns from session start
--   "end"     BIGINT   ns from session start
--   name_id   BIGINT   kernel name id (NULL for memory operations)
--   name      VARCHAR  kernel name (NULL for memory operations; '?' for an unknown id)
--   detail    BIGINT   copyKind for memcpys, NULL otherwise
--   bytes     BIGINT   bytes moved or set (NULL for kernels)
--   grid      VARCHAR  'X×Y×Z' for kernels
--   block     VARCHAR  'X×Y×Z' for kernels
WITH ops AS (
    SELECT 'kernel' AS kind, deviceId AS device, streamId AS stream, start, "end",
           CASE $name_kind WHEN 'short' THEN shortName ELSE demangledName END AS name_id,
           NULL::BIGINT AS detail, NULL::BIGINT AS bytes,
           gridX || '×' || gridY || '×' || gridZ AS grid,
           blockX || '×' || blockY || '×' || blockZ AS block
    FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
    WHERE in_window(start, "end", $t0, $t1)
    UNION ALL
    SELECT 'memcpy', deviceId, streamId, start, "end", NULL, copyKind, bytes, NULL, NULL
    FROM filtered_memcpys($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
    WHERE in_window(start, "end", $t0, $t1)
    UNION ALL
    SELECT 'memset', deviceId, streamId, start, "end", NULL, NULL, bytes, NULL, NULL
    FROM filtered_memsets($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
    WHERE in_window(start, "end", $t0, $t1)
),
firsts AS (
    SELECT * FROM ops ORDER BY start, device, stream, "end" LIMIT $limit
)
SELECT
    f.kind, f.device, f.stream, f.start, f."end", f.name_id,
    CASE WHEN f.kind = 'kernel' THEN coalesce(s.value, '?') END AS name,
    f.detail, f.bytes, f.grid, f.block
FROM firsts AS f
LEFT JOIN strings AS s ON s.id = f.name_id
ORDER BY f.start, f.device, f.stream, f."end"
