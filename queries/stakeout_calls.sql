-- stakeout_calls: the CUDA API call that launched each launch of a stakeout, one per process
-- and correlation id, from the temp table stakeout_call_rows (the candidate calls, columns of
-- queries/stakeout_call_rows.sql): a runtime call preferred to a driver one, then the
-- earliest. No parameters.
--
-- Columns:
--   pid             BIGINT   process id of the call
--   correlation_id  BIGINT   CUPTI correlation id (the launch's)
--   tid             BIGINT   thread id of the call
--   api             VARCHAR  the call's name without its version suffix, as nsys prints it
--                            (api_name: cudaLaunchKernel_v7000 -> cudaLaunchKernel);
--                            '<unknown string id N>' when StringIds lacks it
--   api_global_tid  BIGINT   globalTid of the call  } for _nvtx_innermost.sql, which labels
--   api_start       BIGINT   its start, ns          } the call with its NVTX range
--   api_end         BIGINT   its end, ns            } (and queue time: launch start - this)
WITH calls AS (
    SELECT pid_of(globalTid) AS pid, correlationId, start, "end", globalTid, nameId
    FROM stakeout_call_rows
    WHERE globalTid IS NOT NULL AND correlationId IS NOT NULL
    QUALIFY row_number() OVER (
        PARTITION BY pid_of(globalTid), correlationId ORDER BY eventClass, start
    ) = 1
)
SELECT
    c.pid,
    c.correlationId AS correlation_id,
    tid_of(c.globalTid) AS tid,
    string_or_id(api_name(sa.value), c.nameId) AS api,
    c.globalTid AS api_global_tid,
    c.start AS api_start,
    c."end" AS api_end
FROM calls AS c
LEFT JOIN strings AS sa ON sa.id = c.nameId
ORDER BY c.pid, c.correlationId
