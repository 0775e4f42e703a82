-- Probe of queries/_nvtx_ranges.sql's nvtx_group: the group of one range under each --group
-- value: its path, its PyTorch op (torch_label of its name), else (also for any other
-- value) its name. Needs no trace content.
SELECT group_by, nvtx_group(group_by, name, path) AS range
FROM (VALUES
    ('name', 'aten::mm, seq = 12, op_id = 9', 'step / aten::mm, seq = 12, op_id = 9'),
    ('path', 'aten::mm, seq = 12, op_id = 9', 'step / aten::mm, seq = 12, op_id = 9'),
    ('torch', 'aten::mm, seq = 12, op_id = 9', 'step / aten::mm, seq = 12, op_id = 9'),
    ('other', 'aten::mm, seq = 12, op_id = 9', 'step / aten::mm, seq = 12, op_id = 9'),
    ('path', 'layer', NULL)
) AS t(group_by, name, path)
ORDER BY group_by, range
