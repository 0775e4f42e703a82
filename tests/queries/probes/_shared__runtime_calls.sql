-- Probe of queries/_shared.sql's filtered_runtime_calls: the CUDA API calls that pass the
-- pid/window filter and, with a selection, launched the selected work.
SELECT pid_of(c.globalTid) AS pid, tid_of(c.globalTid) AS tid, c.correlationId, c.start,
       c."end", s.value AS name
FROM filtered_runtime_calls($pid, $start_ns, $end_ns, selection := $selection) AS c
JOIN strings AS s ON s.id = c.nameId
ORDER BY c.start
