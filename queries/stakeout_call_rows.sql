-- stakeout_call_rows: the CUDA API calls that may have launched the launches in the temp
-- table stakeout_probes (pid BIGINT, correlation_id BIGINT): every call of the same process
-- and correlation id, from the runtime_calls view (a cache entry, a parquetdir, or a SQLite
-- export with more launches listed than queries/stakeout_call_rows_export.sql is used for).
-- No parameters. Ordered by correlation id, thread, start.
--
-- Columns:
--   start          BIGINT  call start, ns from session start
--   end            BIGINT  call end, ns
--   eventClass     BIGINT  nsys event class (a runtime call's class sorts before a driver's)
--   globalTid      BIGINT  the calling thread (serialized global id)
--   correlationId  BIGINT  CUPTI correlation id
--   nameId         BIGINT  StringIds id of the function name
SELECT r.start, r."end", r.eventClass, r.globalTid, r.correlationId, r.nameId
FROM runtime_calls AS r
-- a semi join reads the runtime table once, keeping only those calls
SEMI JOIN stakeout_probes AS p ON p.correlation_id = r.correlationId AND p.pid = pid_of(r.globalTid)
ORDER BY r.correlationId, r.globalTid, r.start, r.eventClass
