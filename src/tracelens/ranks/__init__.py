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
from .inputs import (
    compile_rank_regex,
    find_traces,
    one_name_pattern,
    pid_numbers,
    rank_from_name,
    unsure_numbers,
)
from .processes import SetAside
from .recorded import FILE_GPU_ORDER, FILE_NAME, GPU_ORDER, ONLY_EXPORT, RANK_REGEX
from .reduce import RanksResult, reduce
from .summary import RankFailure, RankSummary, SharedExport, summarise

__all__ = [
    "ENGINES",
    "RankFailure",
    "RankSummary",
    "RanksResult",
    "SetAside",
    "SharedExport",
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
    worker_threads: int | None = None,
    worker_memory: int | str | None = None,
    strict: bool = False,
    progress: Progress | None = None,
) -> RanksResult:
    """Analyse the per-rank exports of one run (paths, globs or directories).

    A trace's rank is the one its export records (:mod:`.recorded`: MPI_RANKS, NCCL's
    communicator-creation payloads, the recorded launch environment), else the first group
    of ``rank_regex`` over its file name (default: the last integer in the name); an
    explicit ``rank_regex`` takes precedence over the export; a single export with no rank
    anywhere is rank 0. ``ranks.rank_source`` says which decided. An export holding several processes that ran kernels (a single-node job
    profiled as one report) is one rank per process that is a rank (:mod:`.processes`: the
    others are ``set_aside``), numbered by GPU (see :func:`_in_process_order`); one left
    with a single rank is that rank's export. A file that cannot be analysed is listed in ``failures`` (and its rank in
    ``missing_ranks``) while the others are analysed, unless ``strict``: then its error is
    raised. Two files with one rank are a UsageError.

    ``worker_threads`` and ``worker_memory`` (bytes, or text such as ``'4GB'``) cap each
    worker's DuckDB; see :func:`.engine.worker_limits` for the defaults.
    """
    paths = find_traces(traces)
    rx = compile_rank_regex(rank_regex)
    named = [rank_from_name(p, rx) for p in paths]
    if rank_regex:
        # The names alone decide: two files with one rank are an error before the map
        # (which can take hours), not after it.
        _check_unique([(r, str(p)) for r, p in zip(named, paths, strict=True) if r is not None])
    results = map_traces(
        [str(p) for p in paths], engine=engine, jobs=jobs, threads=worker_threads,
        memory=worker_memory, progress=progress,
    )  # fmt: skip
    set_aside = tuple(a for r in results if isinstance(r, SharedExport) for a in r.set_aside)
    # an export whose other processes were set aside is that rank's, as one rank's export
    results = [_sole_rank(r) for r in results]
    if any(isinstance(r, SharedExport) for r in results):
        summaries, failures, sources = _in_process_order(named, results)
        result = _reduce_or_fail(summaries, failures, sources, strict, set_aside)
        return _with_findings(result, _failed_before(named, results))
    summaries: list[tuple[int, RankSummary]] = []
    sources: dict[str, str] = {}
    failures: list[tuple[int | None, RankFailure]] = []
    names_agree = True  # every analysed file's name gives its rank
    for name_rank, result in zip(named, results, strict=True):
        if isinstance(result, RankFailure):
            failures.append((name_rank, result))
            continue
        assert isinstance(result, RankSummary)
        rank, source = _rank_of(result, name_rank, rank_regex)
        if rank is None and len(paths) == 1 and not rank_regex:
            # one export, no rank anywhere: there is nothing to number it against
            rank, source = 0, ONLY_EXPORT
        if rank is None:
            failures.append((None, RankFailure(result.path, _no_rank(result, rank_regex))))
        else:
            summaries.append((rank, result))
            sources[result.path] = source
            names_agree &= rank == name_rank
    if not names_agree:
        # The names do not carry the ranks (w3-of-8.sqlite, ranks from MPI_RANKS): a failed
        # file's rank is unknown, not the number in its name, and is not called missing.
        failures = [(None, failure) for _, failure in failures]
    _check_unique([(rank, s.path) for rank, s in summaries])
    gaps_known, unsure = _gaps_said(paths, rx, rank_regex, sources, summaries, failures)
    result = _reduce_or_fail(summaries, failures, sources, strict, set_aside, gaps_known)
    return _with_findings(result, unsure)


def _gaps_said(paths, rx, rank_regex, sources, summaries, failures) -> tuple[bool, list[str]]:
    """(whether the rank numbers' gaps are missing ranks, the finding that says why not
    when the numbers look like no ranks)."""
    # the last integers of unrelated names (a_7gpu, b_2gpu) number the ranks but their gaps
    # are no evidence of missing ranks; names of one pattern (rank0, rank2) are, unless
    # their numbers are no ranks' (pids 12345 and 12391), which is said
    by_name = any(source == FILE_NAME for source in sources.values())
    if rank_regex or not by_name:
        return True, []
    if not one_name_pattern(paths, rx):
        return False, []
    numbers = [r for r, _ in summaries] + [r for r, _ in failures if r is not None]
    by_pid = pid_numbers(
        [(rank, s.pids) for rank, s in summaries if sources.get(s.path) == FILE_NAME]
    )
    unsure = by_pid or unsure_numbers(numbers)
    return unsure is None, [unsure] if unsure else []


def _reduce_or_fail(
    summaries, failures, sources, strict: bool, set_aside=(), gaps_known: bool = True
) -> RanksResult:
    if failures and (strict or not summaries):
        _, first = min(failures, key=lambda f: f[1].path)
        error = MissingDataError if first.exit_code == 3 else TraceError
        more = f" ({len(failures) - 1} more file(s) failed)" if len(failures) > 1 else ""
        raise error(first.path, first.reason + more)
    return reduce(summaries, failures, sources, set_aside, gaps_known=gaps_known)


def _sole_rank(result):
    """``result``, or the one rank of a :class:`SharedExport` whose other processes were
    set aside (ranked by its recorded rank or its file name, as one rank's export)."""
    if isinstance(result, SharedExport) and len(result.ranks) == 1:
        return result.ranks[0]
    return result


def _in_process_order(named: list[int | None], results: list) -> tuple[list, list, dict]:
    """Ranks numbered 0, 1, ... when an export holds several ranks' processes (a
    single-node job profiled as one report): the export records no rank per process (nsys
    keeps the launched process's environment, not that of the ranks it starts), and a
    rank drives the GPU of its local rank (torchrun's convention), so the processes are
    numbered in the order of the lowest GPU of their collectives (else of their kernels),
    the exports in the order of their names' ranks (else their paths). Failed files have
    no rank here."""
    order = sorted(
        (i for i, r in enumerate(results) if not isinstance(r, RankFailure)),
        key=lambda i: (named[i] is None, named[i] or 0, results[i].path),
    )
    source = GPU_ORDER if len(order) == 1 else FILE_GPU_ORDER
    summaries: list[tuple[int, RankSummary]] = []
    for i in order:
        result = results[i]
        for summary in result.ranks if isinstance(result, SharedExport) else (result,):
            summaries.append((len(summaries), summary))
    sources = {s.path: source for _, s in summaries}
    failures = [(None, r) for r in results if isinstance(r, RankFailure)]
    return summaries, failures, sources


def _failed_before(named: list[int | None], results: list) -> list[str]:
    """When exports are numbered process by process (:func:`_in_process_order`) and one
    that failed comes before an analysed one in file order: the ranks it held are not
    counted, so the numbers from there on are lower than the job's; said, not hidden."""
    from pathlib import Path

    def key(i: int) -> tuple:
        return (named[i] is None, named[i] or 0, results[i].path)

    failed = [i for i, r in enumerate(results) if isinstance(r, RankFailure)]
    analysed = [i for i, r in enumerate(results) if not isinstance(r, RankFailure)]
    before = sorted((i for i in failed if any(key(i) < key(j) for j in analysed)), key=key)
    if not before or not analysed:
        return []
    first = min((j for j in analysed if key(j) > key(before[0])), key=key)
    names = ", ".join(Path(results[i].path).name for i in before)
    comes = "comes" if len(before) == 1 else "come"
    return [
        f"rank numbers count the processes of the exports analysed only: {names} failed and "
        f"{comes} before {Path(results[first].path).name} in file order, so the ranks "
        "numbered from there on are lower than the job's"
    ]


def _with_findings(result: RanksResult, more: list[str]) -> RanksResult:
    from dataclasses import replace

    return replace(result, findings=(*result.findings, *more)) if more else result


def _rank_of(
    summary: RankSummary, name_rank: int | None, rank_regex: str | None
) -> tuple[int | None, str]:
    """The rank and what it came from: --rank-regex when given, else the export's own
    record, else the file name."""
    if rank_regex:
        return name_rank, RANK_REGEX
    if summary.recorded_rank is not None:
        return summary.recorded_rank, summary.recorded_rank_source or ""
    return name_rank, FILE_NAME


def _no_rank(summary: RankSummary, rank_regex: str | None) -> str:
    """Why a file has no rank. With --rank-regex its name alone gives the rank: a rank
    the export records is not used, and is named (it was said to record none)."""
    if not rank_regex:
        return (
            "has no rank: no integer in its file name matches the rank regex and the "
            "export records none (MPI_RANKS, NCCL, environment); pass --rank-regex"
        )
    said = f"has no rank: its file name does not match --rank-regex '{rank_regex}'"
    if summary.recorded_rank is not None:
        said += (
            f" (the export records rank {summary.recorded_rank}, from "
            f"{summary.recorded_rank_source}, which --rank-regex overrides: without it the "
            "exports' records give the ranks)"
        )
    return said


def _check_unique(ranked_paths: list[tuple[int, str]]) -> None:
    seen: dict[int, str] = {}
    for rank, path in ranked_paths:
        if rank in seen:
            raise UsageError(
                f"rank {rank} is both {seen[rank]} and {path}; pass {{param}} to say "
                "where the rank is in the file names",
                param="rank_regex",
            )
        seen[rank] = path
