-- findings_range_ends_kernels_export: the kernel rows of the export that end at one of some
-- times, in the table's rowid order, read by SQLite from its own table
-- (Trace._sqlite_rows): the order nsys analyze 2022.4 scans them in, from which
-- gpu-low-util takes the context of a (process, device)'s range where operations of
-- several contexts end it together (the first of them), and gpu-starv the context of a
-- gap that such operations start (the last of them) (tracelens.findings_gpu.
-- _in_export_order reads the kernel, memcpy and memset queries in nsys's order). As nsys,
-- only rows that start after 0. A full scan of the table; run only for such ties.
-- Needs CUPTI_ACTIVITY_KIND_KERNEL with start, end, deviceId, globalPid, contextId.
--
-- Parameters:
--   $ends  TEXT  a JSON array of the end times wanted (integers, ns)
--
-- Columns:
--   start      INTEGER  start, ns from session start
--   end        INTEGER  end, ns (one of $ends)
--   deviceId   INTEGER  CUDA device ordinal
--   pid        INTEGER  operating-system pid of the launching process (globalPid bits 24-47)
--   contextId  INTEGER  CUDA context id
SELECT start, "end", deviceId, (globalPid >> 24) & 16777215 AS pid, contextId
FROM CUPTI_ACTIVITY_KIND_KERNEL
WHERE "end" IN (SELECT CAST(value AS INTEGER) FROM json_each($ends)) AND start > 0
ORDER BY rowid
