-- gpu_work_ids: the devices, streams and processes that ran GPU work (kernels, memcpys,
-- memsets), whatever the filters: what an empty result's hint lists ("devices present: 0, 1").
-- No parameters.
-- Columns:
--   kind  VARCHAR  'device' | 'stream' | 'pid'
--   id    BIGINT   CUDA device ordinal (deviceId), CUDA stream id (streamId) or process id
WITH work AS (
    SELECT deviceId, streamId, globalPid FROM kernels
    UNION ALL SELECT deviceId, streamId, globalPid FROM memcpys
    UNION ALL SELECT deviceId, streamId, globalPid FROM memsets
)
SELECT DISTINCT 'device' AS kind, CAST(deviceId AS BIGINT) AS id FROM work
UNION
SELECT DISTINCT 'stream', CAST(streamId AS BIGINT) FROM work
UNION
SELECT DISTINCT 'pid', CAST(pid_of(globalPid) AS BIGINT) FROM work
ORDER BY kind, id;
