-- findings_profiler_overheads: the CUDA profiling flush and stop overheads nsys analyze
-- 2022.4's utilization rules (gpu-starv, gpu-low-util) count as GPU work of the process
-- where they lie strictly inside its first-to-last operation range on a device (the user
-- cannot address that time); tracelens.findings_gpu.gpu_ops places them in those ranges.
-- No parameters (the event filter applies to the operations whose ranges they fall in).
--
-- Columns:
--   start_ns  BIGINT  start, ns from session start
--   end_ns    BIGINT  end, ns
--   pid       BIGINT  operating-system pid of the profiled process
SELECT o.start::BIGINT AS start_ns, o."end"::BIGINT AS end_ns, pid_of(o.globalTid)::BIGINT AS pid
FROM profiler_overhead AS o
JOIN strings AS s ON s.id = o.nameId
WHERE s.value IN ('CUDA profiling data flush overhead', 'CUDA profiling stop overhead',
                  'CUDA profiling overhead')
