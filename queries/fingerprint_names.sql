-- fingerprint_names: the demangled kernel names a fingerprint may meet, for the library to
-- normalize once each (tracelens.fingerprint.build registers the result as fp_names).
--
-- Parameters:
--   $all_strings  BOOLEAN  true: every string of StringIds (no scan of the kernel table:
--                          the fingerprint then reads the kernels once); false: only the
--                          distinct demangled names of the kernels (one more scan, for
--                          exports with very many strings)
--
-- Columns:
--   name_id  BIGINT   StringIds id (kernels.demangledName)
--   name     VARCHAR  the string
-- Two branches, so that with $all_strings the plan holds no scan of the kernels (one
-- WHERE with an OR kept it: half a CPU second on the 5M-kernel trace read directly).
SELECT s.id AS name_id, s.value AS name
FROM strings AS s
WHERE $all_strings
UNION ALL
SELECT s.id AS name_id, s.value AS name
FROM strings AS s
WHERE NOT $all_strings AND s.id IN (SELECT DISTINCT demangledName FROM kernels)
ORDER BY name_id
