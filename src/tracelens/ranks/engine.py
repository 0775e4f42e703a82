"""Where the map runs: in this process, in a local process pool, or as Ray tasks.

Each worker opens one trace, summarises it and sends back only the summary (Arrow tables),
so the driver's memory grows with the number of ranks, not with the traces' size. The
results come back in input order whatever order the workers finish in, so every engine
gives the same answer.

Ray: ``engine="ray"`` connects to the cluster ``RAY_ADDRESS`` names (``ray.init()``'s own
rule), or starts a local Ray instance when none is set; an instance already initialised by
the caller is used as it is. The trace paths must be readable by the workers under the same
names (a shared file system), and the workers need tracelens installed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from ..choices import RANK_ENGINES
from ..errors import UsageError
from .summary import RankFailure, RankSummary, summarise_or_failure

ENGINES = RANK_ENGINES
#: progress(done, total, path): called in the driver after each trace is summarised.
Progress = Callable[[int, int, str], None]
Result = RankSummary | RankFailure


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise UsageError(f"unknown --engine {engine!r}; use one of: {', '.join(ENGINES)}")
    return engine


def map_traces(
    paths: Sequence[str],
    *,
    engine: str = "local",
    jobs: int | None = None,
    progress: Progress | None = None,
) -> list[Result]:
    """Summarise every trace (``summarise_or_failure``), in the order of ``paths``.

    ``jobs``: worker processes for the local engine (default: the CPU count; 1 runs in this
    process); ignored by Ray, which schedules one task per trace on the cluster's CPUs.
    """
    check_engine(engine)
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1 (got {jobs})")
    if engine == "ray":
        return _map_ray(list(paths), progress)
    jobs = min(jobs or os.cpu_count() or 1, len(paths)) or 1
    if jobs == 1:
        return _map_serial(list(paths), progress)
    return _map_pool(list(paths), jobs, progress)


def _summarise_safely(path: str) -> Result:
    """What a worker runs: a failure record for bad input, and for a bug too (one trace
    that trips tracelens must not stop a thousand others; the message says it is a bug)."""
    try:
        return summarise_or_failure(path)
    except Exception as exc:  # noqa: BLE001 - reported per file, see above
        return RankFailure(path, f"internal error: {type(exc).__name__}: {exc} (please report it)")


def _map_serial(paths: list[str], progress: Progress | None) -> list[Result]:
    out = []
    for i, path in enumerate(paths, 1):
        out.append(_summarise_safely(path))
        if progress:
            progress(i, len(paths), path)
    return out


def _map_pool(paths: list[str], jobs: int, progress: Progress | None) -> list[Result]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # spawn, not fork: the driver may hold DuckDB connections and threads, which a forked
    # child must not inherit.
    ctx = multiprocessing.get_context("spawn")
    results: list[Result | None] = [None] * len(paths)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        futures = {pool.submit(_summarise_safely, p): i for i, p in enumerate(paths)}
        for done, future in enumerate(as_completed(futures), 1):
            i = futures[future]
            results[i] = future.result()
            if progress:
                progress(done, len(paths), paths[i])
    return results  # type: ignore[return-value]


def _map_ray(paths: list[str], progress: Progress | None) -> list[Result]:
    try:
        import ray
    except ImportError:
        raise UsageError(
            "--engine ray needs Ray, an optional extra: pip install 'nsys-tracelens[ray]'"
        ) from None
    started = not ray.is_initialized()
    if started:
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        task = ray.remote(num_cpus=1)(_summarise_safely)
        refs = [task.remote(p) for p in paths]
        index = {ref: i for i, ref in enumerate(refs)}
        results: list[Result | None] = [None] * len(paths)
        pending, done = list(refs), 0
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                i = index[ref]
                results[i] = ray.get(ref)
                done += 1
                if progress:
                    progress(done, len(paths), paths[i])
        return results  # type: ignore[return-value]
    finally:
        if started:
            ray.shutdown()
