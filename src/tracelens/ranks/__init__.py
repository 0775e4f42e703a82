"""Many ranks of one run at once: which rank is the straggler, how long the others wait in
each collective, whether the clocks agree, whether every rank runs the same kernels.

    from tracelens.ranks import analyse_ranks
    result = analyse_ranks(["runs/"], jobs=4)         # or engine="ray"
    result.findings      # "rank 5 made the others wait 38.000 ms per step in AllReduce ..."
    result.ranks         # polars: one row per rank
    result.step_matrix() # rank x step

Each trace is mapped to a small summary (:mod:`.summary`) by a worker (:mod:`.engine`:
this process, a local process pool, or Ray tasks) and the summaries are reduced in the
driver (:mod:`.reduce`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..errors import MissingDataError, TraceError, UsageError
from .engine import ENGINES, Progress, map_traces
from .inputs import compile_rank_regex, find_traces, rank_from_name
from .reduce import RanksResult, reduce
from .summary import RankFailure, RankSummary, summarise

__all__ = [
    "ENGINES",
    "RankFailure",
    "RankSummary",
    "RanksResult",
    "analyse_ranks",
    "find_traces",
    "summarise",
]


def analyse_ranks(
    traces: Sequence[str | os.PathLike[str]],
    *,
    rank_regex: str | None = None,
    engine: str = "local",
    jobs: int | None = None,
    strict: bool = False,
    progress: Progress | None = None,
) -> RanksResult:
    """Analyse the per-rank exports of one run (paths, globs or directories).

    A trace's rank is the MPI rank its export records (MPI_RANKS, with ``--trace mpi``),
    else the first group of ``rank_regex`` over its file name (default: the last integer
    in the name); an explicit ``rank_regex`` takes precedence over the export. A file that
    cannot be analysed is listed in ``failures`` (and its rank in ``missing_ranks``) while
    the others are analysed, unless ``strict``: then its error is raised. Two files with
    one rank are a UsageError.
    """
    paths = find_traces(traces)
    rx = compile_rank_regex(rank_regex)
    named = [rank_from_name(p, rx) for p in paths]
    results = map_traces([str(p) for p in paths], engine=engine, jobs=jobs, progress=progress)
    summaries: list[tuple[int, RankSummary]] = []
    failures: list[tuple[int | None, RankFailure]] = []
    for name_rank, result in zip(named, results, strict=True):
        if isinstance(result, RankFailure):
            failures.append((name_rank, result))
            continue
        rank = name_rank if rank_regex or result.mpi_rank is None else result.mpi_rank
        if rank is None:
            reason = (
                "has no rank: no integer in its file name matches the rank regex and the "
                "export records no MPI rank; pass --rank-regex"
            )
            failures.append((None, RankFailure(result.path, reason)))
        else:
            summaries.append((rank, result))
    _check_unique(summaries)
    if failures and (strict or not summaries):
        _, first = min(failures, key=lambda f: f[1].path)
        error = MissingDataError if first.exit_code == 3 else TraceError
        more = f" ({len(failures) - 1} more file(s) failed)" if len(failures) > 1 else ""
        raise error(first.path, first.reason + more)
    return reduce(summaries, failures)


def _check_unique(summaries: list[tuple[int, RankSummary]]) -> None:
    seen: dict[int, str] = {}
    for rank, s in summaries:
        if rank in seen:
            raise UsageError(
                f"rank {rank} is both {seen[rank]} and {s.path}; pass --rank-regex to say "
                "where the rank is in the file names"
            )
        seen[rank] = s.path
