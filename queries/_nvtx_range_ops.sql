-- _nvtx_range_ops: creates the temp table nvtx_range_ops: per NVTX range, the GPU operations
-- whose launching CUDA API call it holds innermost (on threads whose ranges nest; those
-- whose ranges overlap are nvtx_overlap_holders'), from nvtx_op_holds, which
-- tracelens.nvtx_sweep registers: each operation with that range (NULL: none, or on a
-- thread whose ranges overlap), its span and whether it is the one operation counted for
-- its call. An aggregate of 5M operations: DuckDB's took a third of the CPU time of the
-- polars group-by it replaces (5M operations in ~200k ranges: 0.23 vs 0.54 CPU s).
--
-- Columns of nvtx_range_ops:
--   range_id  BIGINT  nsys's RangeId (NVTX_EVENTS rowid)
--   first_ns  BIGINT  start of its earliest operation, ns from session start
--   last_ns   BIGINT  end of its latest operation, ns
--   ops       BIGINT  operations, as nsys counts them: distinct launching calls
CREATE OR REPLACE TEMP TABLE nvtx_range_ops AS
SELECT range_id, min(start) AS first_ns, max("end") AS last_ns,
       count(*) FILTER (WHERE counted) AS ops
FROM nvtx_op_holds
WHERE range_id IS NOT NULL
GROUP BY range_id
