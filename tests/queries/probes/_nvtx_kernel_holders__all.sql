-- Probe of queries/_nvtx_kernel_holders.sql: the nvtx_kernel_holders table it creates.
SELECT range_id, holder_id, gid, first
FROM nvtx_kernel_holders
ORDER BY range_id, holder_id
