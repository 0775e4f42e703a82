-- Probe of queries/_nvtx_matched_ranges.sql's nvtx_label_matches: a full match of the label
-- or of the domain-qualified name, never a part of either. Needs no trace content.
SELECT label, name, label_re, nvtx_label_matches(label, name, label_re) AS matches
FROM (VALUES
    ('layer', 'dom:layer', 'layer'),
    ('layer', 'dom:layer', 'dom:layer'),
    ('layer', 'dom:layer', 'dom:.*'),
    ('layer', 'dom:layer', 'lay'),
    ('layer', 'dom:layer', 'dom'),
    ('step 1', 'step 1', 'step .*'),
    (NULL, NULL, 'step')
) AS t(label, name, label_re)
ORDER BY label, label_re
