-- lineup_activities: GPU time per activity name, the input of `tracelens lineup` (GPU time by
-- kernel category). One row per kernel name (per demangled name and displayed name) and per
-- memory operation, per $by group; kernels, memcpys and memsets together are the GPU time
-- the line-up's shares are computed over. Ordered by group (by stream: device, process, then
-- stream), then total time, largest first.
--
-- Memory operations are labelled exactly as `memory_time_summary` labels them (nsys 2022.4
-- labels from memcpys.copyKind): '[CUDA memcpy HtoD]', ..., '[CUDA Unified Memory memcpy
-- DtoD]', '[CUDA memcpy kind N]' for a copyKind outside 0-13, and '[CUDA memset]'.
--
-- Parameters (NULL means "no filter"):
--   $by                VARCHAR  'device' | 'stream' | 'pid' | NULL: what group_key holds
--   $name_kind         VARCHAR  'demangled' | 'short' | 'mangled': how `display` spells a
--                               kernel (mangled falls back to demangled where absent)
--   $device            BIGINT   CUDA device ordinal (deviceId)
--   $pid               BIGINT   operating-system process id
--   $stream            BIGINT   CUDA stream id
--   $start_ns, $end_ns BIGINT   time window, ns from session start: as nsys, keep an event
--                               that ends at or after $start_ns and starts before $end_ns
--                               (in_window in _shared.sql)
--   $selection         BIGINT   a work_selection id (--nvtx, --step): only the GPU work in it
--
-- The rows are queries/_lineup.sql's lineup_activity_rows of the kernels read here.
--
-- Columns:
--   group_key  BIGINT   device ordinal, stream id or process id, as $by says; NULL without $by
--   stream_device  BIGINT  with $by 'stream': the device ordinal of the stream (a stream id
--                          is a stream's only within one device and process); NULL otherwise
--   stream_pid     BIGINT  with $by 'stream': the process id of the stream; NULL otherwise
--   kind       VARCHAR  'kernel', 'memcpy' or 'memset'
--   name       VARCHAR  demangled kernel name (what categories are decided on), or the
--                       memory operation label
--   display    VARCHAR  the kernel name as $name_kind spells it; the label for memory
--                       operations
--   calls      BIGINT   kernel launches, or memory operations
--   total_ns   BIGINT   sum of durations, ns
WITH kernel_launches AS (
    SELECT
        CASE $by
            WHEN 'device' THEN deviceId
            WHEN 'stream' THEN streamId
            WHEN 'pid' THEN pid_of(globalPid)
        END AS group_key,
        CASE WHEN $by = 'stream' THEN deviceId END AS stream_device,
        CASE WHEN $by = 'stream' THEN pid_of(globalPid) END AS stream_pid,
        demangledName AS name_id,
        CASE $name_kind
            WHEN 'short' THEN shortName
            WHEN 'mangled' THEN coalesce(mangledName, demangledName)
            ELSE demangledName
        END AS display_id,
        "end" - start AS dur_ns
    FROM filtered_kernels($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
),
per_kernel AS (
    SELECT group_key, stream_device, stream_pid, name_id, display_id, count(*) AS calls,
           sum(dur_ns) AS total_ns
    FROM kernel_launches
    GROUP BY ALL
)
SELECT group_key, stream_device, stream_pid, kind, name, display, calls,
       total_ns::BIGINT AS total_ns
FROM lineup_activity_rows('per_kernel', $by, $device, $pid, $stream, $start_ns, $end_ns,
                          selection := $selection)
ORDER BY stream_device NULLS LAST, stream_pid NULLS LAST, group_key NULLS LAST, total_ns DESC,
         kind, name, display
