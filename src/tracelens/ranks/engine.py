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

from .._engine import UNLIMITED, Limits
from ..choices import RANK_ENGINES
from ..errors import UsageError
from .summary import RankFailure, RankSummary, SharedExport, summarise_or_failure

ENGINES = RANK_ENGINES
#: progress(done, total, path): called in the driver after each trace is summarised.
Progress = Callable[[int, int, str], None]
Result = RankSummary | SharedExport | RankFailure


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise UsageError(
            f"unknown {{param}} {engine!r}; use one of: {', '.join(ENGINES)}", param="engine"
        )
    return engine


def map_traces(
    paths: Sequence[str],
    *,
    engine: str = "local",
    jobs: int | None = None,
    threads: int | None = None,
    memory: int | str | None = None,
    progress: Progress | None = None,
) -> list[Result]:
    """Summarise every trace (``summarise_or_failure``), in the order of ``paths``.

    ``jobs``: worker processes for the local engine (default: the CPU count; 1 runs in this
    process); ignored by Ray, which schedules one task per trace on the cluster's CPUs.
    ``threads`` and ``memory``: each worker's DuckDB limits (:func:`worker_limits`).
    A worker that dies (killed for memory, a lost Ray node) fails its trace only.
    """
    check_engine(engine)
    if jobs is not None and jobs < 1:
        raise UsageError(f"{{param}} must be at least 1 (got {jobs})", param="jobs")
    paths = list(paths)
    if engine == "local":
        jobs = min(jobs or os.cpu_count() or 1, len(paths)) or 1
    limits = worker_limits(engine, jobs or 1, threads, memory)
    if engine == "ray":
        return _map_ray(paths, limits, progress)
    if jobs == 1:
        return _map_serial(paths, limits, progress)
    return _map_pool(paths, jobs, limits, progress)


def worker_limits(
    engine: str, jobs: int, threads: int | None = None, memory: int | str | None = None
) -> Limits:
    """Each worker's DuckDB limits (every connection its trace opens obeys them, see
    ``_engine.limits``). Defaults: in this process (one job) DuckDB's own; in a
    local pool of ``jobs`` workers, the cores and 80% of RAM shared out (cores // jobs,
    at least 1); on Ray, one thread (each task asks Ray for as many CPUs as it has threads,
    so Ray packs tasks onto cores) and no memory cap unless given."""
    if threads is not None and threads < 1:
        raise UsageError(f"{{param}} must be at least 1 (got {threads})", param="worker_threads")
    mem = parse_size(memory) if memory is not None else None
    if engine == "ray":
        return Limits(threads or 1, mem)
    if jobs == 1:
        return Limits(threads, mem)
    cores = os.cpu_count() or 1
    ram = _physical_memory()
    default_mem = int(ram * 0.8 / jobs) if ram else None
    return Limits(threads or max(cores // jobs, 1), mem if mem is not None else default_mem)


_UNITS = {
    "": 1, "B": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
    "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40,
}  # fmt: skip
_MIN_MEMORY = 2**24  # DuckDB needs a few MB to run at all


def parse_size(value: int | str) -> int:
    """Bytes from an int or text such as '4GB', '512 MiB', '2e9' (a UsageError otherwise)."""
    import re

    if isinstance(value, int):
        size = value
    else:
        m = re.fullmatch(r"\s*([0-9.eE+]+)\s*([KMGT]?i?B?)\s*", str(value), re.IGNORECASE)
        unit = m.group(2).upper() if m else None
        if m is None or unit not in _UNITS:
            raise UsageError(
                f"{{param}} {value!r} is not a size; write e.g. 4GB, 512MiB or bytes",
                param="worker_memory",
            )
        try:
            size = int(float(m.group(1)) * _UNITS[unit])
        except ValueError:
            raise UsageError(f"{{param}} {value!r} is not a size", param="worker_memory") from None
    if size < _MIN_MEMORY:
        raise UsageError(
            f"{{param}} {value!r} is too small (DuckDB needs at least 16MiB)", param="worker_memory"
        )
    return size


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _summarise_safely(path: str, limits: Limits = UNLIMITED) -> Result:
    """What a worker runs: a failure record for bad input, and for a bug too (one trace
    that trips tracelens must not stop a thousand others; the message says it is a bug)."""
    try:
        return summarise_or_failure(path, threads=limits.threads, memory_limit=limits.memory_limit)
    except Exception as exc:  # noqa: BLE001 - reported per file, see above
        return RankFailure(path, f"internal error: {type(exc).__name__}: {exc} (please report it)")


def _check_ray_fits(ray, cpus: int) -> None:
    """A task asking for more CPUs than any node has would wait forever: say so instead.
    Not checked for one CPU, nor on a cluster whose nodes report no CPUs yet (an
    autoscaling cluster with a zero-CPU head starts its workers on demand)."""
    if cpus <= 1:
        return
    most = max((n["Resources"].get("CPU", 0) for n in ray.nodes() if n.get("Alive")), default=0)
    if 0 < most < cpus:
        raise UsageError(
            f"{{param}} {cpus}: no Ray node has that many CPUs (the largest has "
            f"{most:g}); each task asks Ray for one CPU per thread",
            param="worker_threads",
        )


def _worker_died(path: str, exc: BaseException, where: str) -> RankFailure:
    first = (str(exc).strip().splitlines() or [""])[0][:200]
    return RankFailure(path, f"not analysed: {where} ({type(exc).__name__}: {first})")


def _map_serial(paths: list[str], limits: Limits, progress: Progress | None) -> list[Result]:
    out = []
    for i, path in enumerate(paths, 1):
        out.append(_summarise_safely(path, limits))
        if progress:
            progress(i, len(paths), path)
    return out


def _map_pool(
    paths: list[str], jobs: int, limits: Limits, progress: Progress | None
) -> list[Result]:
    """The map in a pool of ``jobs`` processes. A worker that dies (the kernel's OOM killer,
    a signal) breaks the whole pool, and nothing says which of the traces in flight killed
    it: those traces and the ones not yet started run again in a new pool of one worker, in
    which a death names its trace (the earliest unfinished one): that trace fails with the
    reason and the rest go on in a fresh one-worker pool."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    # spawn, not fork: the driver may hold DuckDB connections and threads, which a forked
    # child must not inherit.
    ctx = multiprocessing.get_context("spawn")
    _check_main_is_guarded()
    results: list[Result | None] = [None] * len(paths)
    pending, workers, done = list(range(len(paths))), jobs, 0

    def finish(i: int, result: Result) -> None:
        nonlocal done
        results[i], done = result, done + 1
        if progress:
            progress(done, len(paths), paths[i])

    while pending:
        broken: list[tuple[int, BaseException]] = []
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            futures = {pool.submit(_summarise_safely, paths[i], limits): i for i in pending}
            for future in as_completed(futures):
                try:
                    finish(futures[future], future.result())
                except BrokenProcessPool as exc:
                    broken.append((futures[future], exc))
        pending = sorted(i for i, _ in broken)
        if pending and workers == 1:
            culprit = pending.pop(0)
            exc = next(e for i, e in broken if i == culprit)
            finish(culprit, _worker_died(paths[culprit], exc, "its worker process died"))
        workers = 1
    return results  # type: ignore[return-value]


def _check_main_is_guarded() -> None:
    """Refuse a pool the main script would start again in every worker. A spawned worker
    re-runs the main module (as ``__mp_main__``) before it takes work, so a call at the
    script's top level, outside ``if __name__ == "__main__":``, runs again in each worker,
    which dies starting its own pool; the driver then sees every trace's worker die and
    could only blame the traces. Python's own message comes from the workers, one
    traceback each: say it once here, before any worker starts."""
    import ast
    import sys
    from multiprocessing import spawn

    main = sys.modules.get("__main__")
    prep = spawn.get_preparation_data("tracelens")
    # What multiprocessing re-runs: a script by path, a module by name (never a package's
    # __main__, which it skips); an interactive session or a notebook re-runs nothing.
    name = prep.get("init_main_from_name")
    rerun = prep.get("init_main_from_path") or (name and not name.endswith(".__main__"))
    path = getattr(main, "__file__", None)
    if not rerun or not path:
        return
    frame, line = sys._getframe(1), None
    while frame is not None:  # the outermost frame running the main module's own code
        if frame.f_globals is main.__dict__ and frame.f_code.co_name == "<module>":
            line = frame.f_lineno
        frame = frame.f_back
    if line is None:
        return
    try:
        tree = ast.parse(open(path, encoding="utf-8").read())
    except (OSError, SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and node.lineno <= line <= (node.end_lineno or 0):
            if any(isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(node.test)):
                return
    raise UsageError(
        f"{{param}} > 1 starts worker processes, which re-run {path} first, and it makes "
        f"this call at its top level (line {line}): put the call under "
        '`if __name__ == "__main__":` or pass {param}=1',
        param="jobs",
    )


def _connect_ray(ray) -> None:
    """ray.init(): the cluster RAY_ADDRESS names, else a new local instance. A cluster that
    cannot be reached (wrong address, not running, its token authentication not satisfied)
    is the user's to fix: one line naming the address, not an internal error."""
    try:
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
    except (ConnectionError, ray.exceptions.RayError) as exc:
        address = os.environ.get("RAY_ADDRESS")
        where = f"the Ray cluster RAY_ADDRESS={address} names" if address else "Ray"
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise UsageError(
            f"{{param}} ray: cannot connect to {where} ({first}); check that it runs and, if "
            "it uses token authentication, set RAY_AUTH_MODE=token with its token",
            param="engine",
        ) from None


def _map_ray(paths: list[str], limits: Limits, progress: Progress | None) -> list[Result]:
    try:
        import ray
    except ImportError:
        raise UsageError(
            "{param} ray needs Ray, an optional extra: pip install 'nsys-tracelens[ray]'",
            param="engine",
        ) from None
    started = not ray.is_initialized()
    if started:
        _connect_ray(ray)
    try:
        cpus = limits.threads or 1
        _check_ray_fits(ray, cpus)
        task = ray.remote(num_cpus=cpus)(_summarise_safely)
        refs = [task.remote(p, limits) for p in paths]
        index = {ref: i for i, ref in enumerate(refs)}
        results: list[Result | None] = [None] * len(paths)
        pending, done = list(refs), 0
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                i = index[ref]
                try:
                    results[i] = ray.get(ref)
                except ray.exceptions.RayError as exc:  # the task's worker or node died
                    results[i] = _worker_died(paths[i], exc, "its Ray task failed")
                done += 1
                if progress:
                    progress(done, len(paths), paths[i])
        return results  # type: ignore[return-value]
    finally:
        if started:
            ray.shutdown()
