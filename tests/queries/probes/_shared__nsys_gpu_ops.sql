-- Probe of queries/_shared.sql's nsys_gpu_ops: the GPU operations of nsys analyze's
-- utilization rules, profiler flush overheads inside a device's range included.
SELECT * FROM nsys_gpu_ops(NULL, NULL, NULL, NULL, NULL) ORDER BY start, deviceId
