-- ranks_collectives: every collective kernel of one rank's trace, numbered per
-- communicator, so that the k-th call on a communicator can be matched across ranks.
-- A communicator is a (device, stream) pair that runs communication kernels (NCCL keeps
-- one stream per communicator); they are numbered in the order of their first collective,
-- which every rank of a job shares when it creates its communicators in the same order.
-- Needs the temp table rank_comm_kernels(name_id BIGINT, kind VARCHAR): the demangled-name
-- ids of the communication kernels and the collective each runs (the library fills it).
-- Parameters: $pid (BIGINT or NULL: every process): only this process's kernels (one rank of
-- an export that holds several ranks' processes).
-- Columns, ordered by comm, seq:
--   comm      BIGINT   communicator number, 0-based, by first use
--   seq       BIGINT   call number on that communicator, 1-based, by start
--   kind      VARCHAR  collective (AllReduce, AllGather, ..., or the kernel's short name)
--   device    BIGINT   CUDA device ordinal
--   stream    BIGINT   CUDA stream id
--   start_ns  BIGINT   kernel start, ns from this trace's session start
--   end_ns    BIGINT   kernel end, ns from this trace's session start
WITH c AS (
    SELECT k.deviceId, k.streamId, k.start, k."end", r.kind
    FROM kernels AS k
    JOIN rank_comm_kernels AS r ON r.name_id = k.demangledName
    WHERE of_process(k.globalPid, $pid)
),
comms AS (
    SELECT
        deviceId,
        streamId,
        row_number() OVER (ORDER BY min(start), deviceId, streamId) - 1 AS comm
    FROM c
    GROUP BY deviceId, streamId
)
SELECT
    comms.comm,
    row_number() OVER (PARTITION BY comms.comm ORDER BY c.start, c."end") AS seq,
    c.kind,
    c.deviceId AS device,
    c.streamId AS stream,
    c.start AS start_ns,
    c."end" AS end_ns
FROM c
JOIN comms USING (deviceId, streamId)
ORDER BY comm, seq
