-- Probe of queries/_memcpy_labels.sql: the memcpy_labels table it creates.
SELECT copyKind, label FROM memcpy_labels ORDER BY copyKind
