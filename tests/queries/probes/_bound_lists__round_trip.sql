-- Probe of queries/_bound_lists.sql: texts with the characters a kernel name may hold
-- (commas, quotes, brackets, a backslash, non-ASCII) and a NULL item come back as they
-- were bound; integers too (beyond 32 bits, negative, NULL); a NULL text is a NULL list,
-- [] an empty one. The parameters are list_param texts (tests/queries/test_shared_queries.py).
SELECT 'text_list' AS macro, i AS item, x AS value
FROM (SELECT unnest(text_list($texts)) AS x, generate_subscripts(text_list($texts), 1) AS i)
UNION ALL
SELECT 'bigint_list', i, x::VARCHAR
FROM (SELECT unnest(bigint_list($ints)) AS x, generate_subscripts(bigint_list($ints), 1) AS i)
UNION ALL
SELECT 'text_list of NULL', NULL, coalesce(text_list(NULL)::VARCHAR, 'NULL')
UNION ALL
SELECT 'bigint_list of []', NULL, len(bigint_list('[]'))::VARCHAR
ORDER BY macro, item
