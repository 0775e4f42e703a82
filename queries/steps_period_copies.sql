-- steps_period_copies: the memcpys and memsets that pass the filter, by device in GPU start
-- order: the operations a step found from the period of the kernel launch sequence holds
-- besides its launches. Such a step is a stretch of one device's kernels and graph
-- replays; its copies and memsets are those of the device that start from the step's first
-- launch up to the next step's (as steps_window_work selects a step's work), so that the
-- step's end and busy time count them, as util --step and NVTX steps do.
-- Read only when some device has a period (most traces' copy tables are small).
--
-- Parameters: $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter
--
-- Columns:
--   device    BIGINT  CUDA device ordinal
--   pid       INTEGER the process that issued it (a device another program used too: the
--                     loop's processes' copies only are its steps')
--   start_ns  BIGINT  start, ns from session start
--   end_ns    BIGINT  end, ns
SELECT deviceId::BIGINT AS device, pid_of(globalPid)::INTEGER AS pid, start::BIGINT AS start_ns,
       "end"::BIGINT AS end_ns
FROM filtered_memcpys($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
UNION ALL
SELECT deviceId::BIGINT, pid_of(globalPid)::INTEGER, start::BIGINT, "end"::BIGINT
FROM filtered_memsets($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
ORDER BY device, start_ns, end_ns
