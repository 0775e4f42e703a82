-- Probe of queries/_nvtx_ranges.sql's torch_label: PyTorch labels lose their per-call
-- arguments, other labels are unchanged. Needs no trace content.
SELECT label, torch_label(label) AS op
FROM (VALUES
    ('aten::mm, seq = 12, op_id = 991065, sizes = [[2, 3]]'),
    ('aten::add_, op_id = 7'),
    ('aten::copy_,sizes=[[4], [4]]'),
    ('aten::linear, stack = [a, b]'),
    ('forward, layer 3'),
    ('train_step 1')
) AS t(label)
ORDER BY label
