-- stakeout_names: the distinct kernel names (demangled and short) of the trace, whether
-- each matches a pattern as stakeout_launches.sql matches it, and how often it was launched.
-- Used to explain an empty stakeout: suggest close names, or say the filters hid them.
--
-- Parameters:
--   $pattern  VARCHAR  the name, or part of it ('exact', 'contains')
--   $regex    VARCHAR  RE2 regular expression (regexp_matches), or NULL
--   $match    VARCHAR  'exact' | 'contains' | 'regex'
--
-- Columns:
--   name      VARCHAR  a demangled or short kernel name
--   matched   BOOLEAN  the pattern matches it
--   launches  BIGINT   launches of kernels with this name (all of the trace, no filter)
WITH names AS (
    SELECT demangledName AS id FROM kernels
    UNION ALL
    SELECT shortName FROM kernels WHERE shortName IS DISTINCT FROM demangledName
)
SELECT
    s.value AS name,
    coalesce(name_matches(s.value, $match, $pattern, $regex), false) AS matched,
    count(*) AS launches
FROM names
JOIN strings AS s ON s.id = names.id
GROUP BY s.value
ORDER BY launches DESC, name
