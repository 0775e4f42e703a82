-- copy_kinds: memory copies per copy kind, for comparing two runs.
-- Parameters: $start_ns, $end_ns BIGINT or NULL (time window, nsys rule).
--   $selection BIGINT or NULL: a work_selection id (--nvtx, --step): only the work in it.
-- Columns:
--   copy_kind  BIGINT   CUPTI copyKind (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP, ... see ENUM_CUDA_MEMCPY_OPER)
--   count      BIGINT   copies
--   bytes      BIGINT   bytes copied
--   total_ns   BIGINT   sum of copy durations, ns
SELECT copyKind AS copy_kind, count(*) AS count, sum(bytes)::BIGINT AS bytes,
       sum("end" - start)::BIGINT AS total_ns
FROM filtered_memcpys(NULL, NULL, NULL, $start_ns, $end_ns, selection := $selection)
GROUP BY copyKind
ORDER BY copyKind
