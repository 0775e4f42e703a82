-- stakeout_name_ids: the StringIds ids of the names a stakeout pattern matches, as
-- stakeout_launches.sql matches them (its matched_ids): a kernel is launched under one of
-- them (demangled or short name) exactly when stakeout_launches.sql keeps it. Read before
-- stakeout_launches.sql on a SQLite export, so that SQLite itself keeps only those kernels.
--
-- Parameters:
--   $pattern  VARCHAR  the name, or part of it ('exact', 'contains')
--   $regex    VARCHAR  RE2 regular expression (regexp_matches), or NULL
--   $match    VARCHAR  'exact' | 'contains' | 'regex'
--
-- Columns:
--   id  BIGINT  a StringIds id whose text matches, ascending
SELECT id
FROM strings
WHERE name_matches(value, $match, $pattern, $regex)
ORDER BY id
