-- _nvtx_call_refit: for the CUDA API calls the sweep could not place (tracelens.nvtx_sweep
-- registers them as nvtx_misfit_calls: call BIGINT, global_tid, start, "end"), the tightest
-- NVTX range of nvtx_tree on the call's thread that contains the whole call: the least
-- (call start - range start) + (range end - call end), then the smaller RangeId, where
-- identical ranges count as one, placed by their first RangeId, of which the last is taken
-- (the innermost: of two identical ranges the first is the parent, as in nvtx_tree).
-- Calls in no range are absent. The misfits are few (a call straddling a range's end, or one on a
-- thread of overlapping start/end ranges), so this join stays small.
--
-- Columns:
--   call      BIGINT  the misfit's key
--   range_id  BIGINT  its innermost range
WITH containers AS (
    SELECT c.call, p.range_id::BIGINT AS range_id,
           (c.start - p.start) + (p."end" - c."end") AS slack,
           min(p.range_id) OVER (PARTITION BY c.call, p.start, p."end") AS first_id
    FROM nvtx_misfit_calls AS c
    JOIN nvtx_tree AS p
      ON p.global_tid = c.global_tid AND p.start <= c.start AND p."end" >= c."end"
)
SELECT call, range_id
FROM containers
QUALIFY row_number() OVER (PARTITION BY call ORDER BY slack, first_id, range_id DESC) = 1
ORDER BY call
