-- _step_top_kernels: the ranking behind tracelens steps' top kernels, shared by
-- steps_top_kernels (over the step_work table) and steps_range_top_kernels (over the steps
-- of NVTX ranges, in one query). Installed by the loader after _shared.sql.
--
-- Table macro step_top_kernels(per_kernel, top): per step and device, the `top` kernels of
-- the relation named `per_kernel` (a table or a CTE of the calling query, one row per step,
-- device and kernel: step, device, name_id (StringIds id of the demangled name), calls,
-- total_ns) with the most time; ties go to the lower name_id. Rows in no order (callers
-- order by step, device, rank).
--
-- Columns:
--   step      BIGINT   step number
--   device    BIGINT   CUDA device ordinal
--   rank      BIGINT   1 for the kernel with the most time in the step on the device
--   calls     BIGINT   its launches in the step
--   total_ns  BIGINT   their summed duration, ns
--   time_pct  DOUBLE   share of the step's kernel time on the device, % (one decimal; 0.0
--                      when that time is 0)
--   name      VARCHAR  demangled kernel name
CREATE OR REPLACE TEMP MACRO step_top_kernels(per_kernel, top) AS TABLE
    WITH ranked AS (
        SELECT *,
               row_number() OVER (PARTITION BY step, device ORDER BY total_ns DESC, name_id) AS rank,
               total_ns / nullif(sum(total_ns) OVER (PARTITION BY step, device), 0) AS share
        FROM query_table(per_kernel)
    )
    SELECT r.step, r.device, r.rank, r.calls, r.total_ns::BIGINT AS total_ns,
           coalesce(round(100 * r.share, 1), 0.0) AS time_pct, s.value AS name
    FROM ranked AS r
    JOIN strings AS s ON s.id = r.name_id
    WHERE r.rank <= top;
