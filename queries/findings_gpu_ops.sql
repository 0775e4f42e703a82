-- findings_gpu_ops: the GPU operations of `nsys analyze` 2022.4's utilization rules
-- (nsys_gpu_ops: kernels, memcpys and memsets that start after 0, plus the CUDA profiler
-- flush overheads inside a process's first-to-last operation range on a device), one row
-- each, in no order: the input of the gpu_gaps (gpu-starv) and gpu_low_util (gpu-low-util)
-- sweeps of tracelens.findings_gpu, which read them once for both rules (each rule was a
-- query of its own before, each sorting its own read: ~3 CPU s apiece on a 5M-kernel trace).
--
-- Parameters: $device, $pid, $stream, $start_ns, $end_ns, $selection  the event filter
--   (NULL: all; $selection: a work_selection id)
--
-- Columns:
--   start_ns  BIGINT  start, ns from session start
--   end_ns    BIGINT  end, ns
--   pid       BIGINT  operating-system pid of the process
--   device    BIGINT  CUDA device ordinal
--   context   BIGINT  CUDA context id (profiler overheads: the smallest of the process's
--                     operations on the device)
SELECT start::BIGINT AS start_ns, "end"::BIGINT AS end_ns, process_id::BIGINT AS pid,
       deviceId::BIGINT AS device, contextId::BIGINT AS context
FROM nsys_gpu_ops($device, $pid, $stream, $start_ns, $end_ns, selection := $selection)
