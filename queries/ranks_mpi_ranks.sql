-- ranks_mpi_ranks: the MPI ranks of the traced threads, from the MPI_RANKS table nsys writes
-- with --trace mpi (one distinct rank for a one-process export). Runs on the export's own
-- tables (Trace._sqlite_rows). No parameters. Needs MPI_RANKS.
--
-- Columns (by rank):
--   rank  INTEGER  an MPI rank (MPI_COMM_WORLD)
SELECT DISTINCT rank
FROM MPI_RANKS
WHERE rank IS NOT NULL
ORDER BY rank
