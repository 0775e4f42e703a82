-- Probe of queries/_ranks_comm_kernels.sql: the rank_comm_kernels table it creates, with
-- each kernel's name.
SELECT k.name_id, s.value AS name, k.kind
FROM rank_comm_kernels AS k
JOIN strings AS s ON s.id = k.name_id
ORDER BY k.name_id
