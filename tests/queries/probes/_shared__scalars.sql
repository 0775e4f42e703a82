-- Probe of queries/_shared.sql's scalar macros: one row per call, its arguments and result
-- (as text, so that every macro fits one table). Needs no trace content.
SELECT 'pid_of' AS macro, 'globalTid of pid 4242 tid 4243 (vm 1)' AS args,
       pid_of((1::BIGINT << 48) | (4242::BIGINT << 24) | 4243)::VARCHAR AS result
UNION ALL SELECT 'tid_of', 'globalTid of pid 4242 tid 4243 (vm 1)',
       tid_of((1::BIGINT << 48) | (4242::BIGINT << 24) | 4243)::VARCHAR
UNION ALL SELECT 'of_process', 'globalTid of pid 4242; pid 4242',
       of_process((4242::BIGINT << 24) | 4243, 4242)::VARCHAR
UNION ALL SELECT 'of_process', 'globalTid of pid 4242; pid 4343',
       of_process((4242::BIGINT << 24) | 4243, 4343)::VARCHAR
UNION ALL SELECT 'of_process', 'globalTid of pid 4242; pid NULL',
       of_process((4242::BIGINT << 24) | 4243, NULL)::VARCHAR
UNION ALL SELECT 'is_nvtx_range_type', '60', is_nvtx_range_type(60)::VARCHAR
UNION ALL SELECT 'is_nvtx_range_type', '71', is_nvtx_range_type(71)::VARCHAR
UNION ALL SELECT 'is_nvtx_range_type', '34 (a mark)', is_nvtx_range_type(34)::VARCHAR
UNION ALL SELECT 'in_window', '[10, 20] in [20, 30]', in_window(10, 20, 20, 30)::VARCHAR
UNION ALL SELECT 'in_window', '[10, 20] in [21, 30]', in_window(10, 20, 21, 30)::VARCHAR
UNION ALL SELECT 'in_window', '[10, 20] in [0, 10]', in_window(10, 20, 0, 10)::VARCHAR
UNION ALL SELECT 'in_window', '[10, 20] in [0, 9]', in_window(10, 20, 0, 9)::VARCHAR
UNION ALL SELECT 'in_window', '[10, 20] in [12, 15] (spans it)', in_window(10, 20, 12, 15)::VARCHAR
UNION ALL SELECT 'in_window', '[10, 20] in [NULL, NULL]', in_window(10, 20, NULL, NULL)::VARCHAR
UNION ALL SELECT 'in_window', '[10, 20] in [NULL, 10]', in_window(10, 20, NULL, 10)::VARCHAR
UNION ALL SELECT 'in_window', '[10, 20] in [20, NULL]', in_window(10, 20, 20, NULL)::VARCHAR
UNION ALL SELECT 'in_window', '[10, 10] in [0, 10] (no duration)', in_window(10, 10, 0, 10)::VARCHAR
UNION ALL SELECT 'in_window', '[10, 10] in [10, 20] (no duration)', in_window(10, 10, 10, 20)::VARCHAR
UNION ALL SELECT 'event_passes', 'device 1 stream 7 pid 4242 [10, 20]; no filter',
       event_passes(1, 7, 4242::BIGINT << 24, 10, 20, NULL, NULL, NULL, NULL, NULL)::VARCHAR
UNION ALL SELECT 'event_passes', 'same; device 0',
       event_passes(1, 7, 4242::BIGINT << 24, 10, 20, 0, NULL, NULL, NULL, NULL)::VARCHAR
UNION ALL SELECT 'event_passes', 'same; device 1, pid 4242, stream 7, window [20, 30]',
       event_passes(1, 7, 4242::BIGINT << 24, 10, 20, 1, 4242, 7, 20, 30)::VARCHAR
UNION ALL SELECT 'event_passes', 'same; pid 4343',
       event_passes(1, 7, 4242::BIGINT << 24, 10, 20, NULL, 4343, NULL, NULL, NULL)::VARCHAR
UNION ALL SELECT 'event_passes', 'same; stream 8',
       event_passes(1, 7, 4242::BIGINT << 24, 10, 20, NULL, NULL, 8, NULL, NULL)::VARCHAR
UNION ALL SELECT 'launched_by', 'op pid 4242 cid 5; call pid 4242 tid 4243 cid 5',
       launched_by(4242::BIGINT << 24, 5, (4242::BIGINT << 24) | 4243, 5)::VARCHAR
UNION ALL SELECT 'launched_by', 'op pid 4242 cid 5; call pid 4343 cid 5',
       launched_by(4242::BIGINT << 24, 5, (4343::BIGINT << 24) | 4343, 5)::VARCHAR
UNION ALL SELECT 'launched_by', 'op pid 4242 cid 5; call pid 4242 cid 6',
       launched_by(4242::BIGINT << 24, 5, (4242::BIGINT << 24) | 4242, 6)::VARCHAR
UNION ALL SELECT 'api_name', 'cudaLaunchKernel_v7000', api_name('cudaLaunchKernel_v7000')
UNION ALL SELECT 'api_name', 'cudaMemcpyAsync_v3020', api_name('cudaMemcpyAsync_v3020')
UNION ALL SELECT 'api_name', 'cuLaunchKernel', api_name('cuLaunchKernel')
UNION ALL SELECT 'api_name', '_v1234', api_name('_v1234')
UNION ALL SELECT 'string_or_id', 'gemm, 7', string_or_id('gemm', 7)
UNION ALL SELECT 'string_or_id', 'NULL, 7', string_or_id(NULL::VARCHAR, 7)
UNION ALL SELECT 'string_or_id', 'NULL, NULL', string_or_id(NULL::VARCHAR, NULL::BIGINT)
UNION ALL SELECT 'is_nvtx_range', '59, end 10', is_nvtx_range(59, 10)::VARCHAR
UNION ALL SELECT 'is_nvtx_range', '60, end 10', is_nvtx_range(60, 10)::VARCHAR
UNION ALL SELECT 'is_nvtx_range', '70, end 10', is_nvtx_range(70, 10)::VARCHAR
UNION ALL SELECT 'is_nvtx_range', '71, end 10', is_nvtx_range(71, 10)::VARCHAR
UNION ALL SELECT 'is_nvtx_range', '59, end NULL (open)', is_nvtx_range(59, NULL)::VARCHAR
UNION ALL SELECT 'is_nvtx_range', '34 (a mark), end 10', is_nvtx_range(34, 10)::VARCHAR
UNION ALL SELECT 'is_nvtx_range', '75 (domain name), end 10', is_nvtx_range(75, 10)::VARCHAR
UNION ALL SELECT 'name_matches', 'gemm_128 exact gemm',
       name_matches('gemm_128', 'exact', 'gemm', NULL::VARCHAR)::VARCHAR
UNION ALL SELECT 'name_matches', 'gemm_128 contains gemm',
       name_matches('gemm_128', 'contains', 'gemm', NULL::VARCHAR)::VARCHAR
UNION ALL SELECT 'name_matches', 'gemm_128 regex ^gemm_[0-9]+$',
       name_matches('gemm_128', 'regex', NULL::VARCHAR, '^gemm_[0-9]+$')::VARCHAR
UNION ALL SELECT 'name_matches', 'gemm_128 regex ^attn',
       name_matches('gemm_128', 'regex', NULL::VARCHAR, '^attn')::VARCHAR
UNION ALL SELECT 'mem_kind_name', k::VARCHAR, mem_kind_name(k) FROM range(9) AS t(k)
ORDER BY macro, args
