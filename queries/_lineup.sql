-- _lineup: the rows of the line-up's input that lineup_activities.sql and
-- report_lineup_activities.sql share: each takes its kernels from its own read (the trace's
-- kernels, or the GPU work the report has already read) and hands them here, grouped.
--
-- lineup_activity_rows(per_kernel, group_by, device, pid, stream, t0, t1, selection): one row per
-- kernel name (per demangled name and displayed name) and per memory operation, per group;
-- unordered (each query orders them).
--   per_kernel  the name of a relation with one row per group and kernel name:
--               group_key BIGINT, stream_device BIGINT, stream_pid BIGINT (the device and
--               process of the stream group_key is, with group_by 'stream'; else NULL),
--               name_id BIGINT (StringIds id of the demangled name), display_id BIGINT (of
--               the name as displayed), calls BIGINT, total_ns
--   group_by    VARCHAR  'device' | 'stream' | 'pid' | NULL: what group_key holds (a stream
--               is a stream id of one device and process: with 'stream' the memory
--               operations are grouped by all three)
--   device, pid, stream, t0, t1, selection: the event filter of the memory operations
--               (NULL: all), as filtered_memcpys takes it
-- Columns: group_key BIGINT, stream_device BIGINT, stream_pid BIGINT, kind VARCHAR ('kernel' | 'memcpy' | 'memset'), name VARCHAR
-- (demangled kernel name, or the memory operation label as memory_time_summary writes it),
-- display VARCHAR (the kernel name as displayed; the label), calls BIGINT, total_ns (ns).
CREATE OR REPLACE TEMP MACRO lineup_activity_rows(per_kernel, group_by, device, pid, stream, t0, t1, selection := NULL) AS TABLE
    WITH memory_ops AS (
        SELECT
            CASE group_by
                WHEN 'device' THEN m.deviceId
                WHEN 'stream' THEN m.streamId
                WHEN 'pid' THEN pid_of(m.globalPid)
            END AS group_key,
            CASE WHEN group_by = 'stream' THEN m.deviceId END AS stream_device,
            CASE WHEN group_by = 'stream' THEN pid_of(m.globalPid) END AS stream_pid,
            'memcpy' AS kind,
            coalesce(k.label, '[CUDA memcpy kind ' || m.copyKind || ']') AS label,
            m."end" - m.start AS dur_ns
        FROM filtered_memcpys(device, pid, stream, t0, t1, selection := selection) AS m
        LEFT JOIN memcpy_labels AS k ON k.copyKind = m.copyKind
        UNION ALL
        SELECT
            CASE group_by
                WHEN 'device' THEN deviceId
                WHEN 'stream' THEN streamId
                WHEN 'pid' THEN pid_of(globalPid)
            END,
            CASE WHEN group_by = 'stream' THEN deviceId END,
            CASE WHEN group_by = 'stream' THEN pid_of(globalPid) END,
            'memset',
            '[CUDA memset]',
            "end" - start
        FROM filtered_memsets(device, pid, stream, t0, t1, selection := selection)
    )
    SELECT
        p.group_key,
        p.stream_device,
        p.stream_pid,
        'kernel' AS kind,
        string_or_id(n.value, p.name_id) AS name,
        string_or_id(d.value, p.display_id) AS display,
        p.calls,
        p.total_ns
    FROM query_table(per_kernel) AS p
    LEFT JOIN strings AS n ON n.id = p.name_id
    LEFT JOIN strings AS d ON d.id = p.display_id
    UNION ALL
    SELECT group_key, stream_device, stream_pid, kind, label, label, count(*), sum(dur_ns)
    FROM memory_ops
    GROUP BY group_key, stream_device, stream_pid, kind, label;
