"""The host thread that launched each kernel, as its rank among its process's threads: a
unit's launches are taken one thread after another (:func:`.order.unit_order`), as they
are one process after another.

CUPTI numbers correlation ids per process, in the order the calls were made on any of its
threads, so in correlation order two threads' launches interleave as the host scheduler
happened to run them: a compute thread's a, b, c and a communication thread's AllReduce
read a, AllReduce, b, c in one run and a, b, AllReduce, c in the next, a launch-order
change on identical work (review8 B1; PyTorch DDP launches its collectives from a thread
of its own). Each thread's own sequence is its program's order.

The threads are ranked per process, the busiest (most CUDA API calls) first
(``queries/fingerprint_thread_calls.sql``): a count the program fixes, where which of two
threads calls first is the scheduler's choice too. Threads that made as many calls as each
other (a tie group) are ranked by their own launch sequences (:func:`untie`), not by id:
the OS numbers threads, and two runs of one program whose two threads got their ids the
other way round took their launches in the other order (a different document). Only the
calls of the other threads (and of a busiest that ties) are kept (on the 5M-kernel bench
trace, 43k of 5M), so a launch's rank is 0 unless its call is among those. The query reads
two columns of every call (0.6-0.75 CPU s on the bench trace's 5M). On a SQLite export
read directly (or through a cache entry that lacks those columns) SQLite keeps those calls
itself instead (:func:`_export_thread_calls`, 0.47 CPU s there; the whole command's peak
1.09-1.13 -> 1.05 GB): a sample of the table names each process's busiest thread, one scan
returns the other threads' calls, and their counts, exact, are checked against the
sample's lower bound of the busiest's; where the check fails (or a thread may tie with the
busiest) the query is read. Asking SQLite whether any process has two threads (its
DISTINCT, ~0.3 CPU s) would not save the scan: PyTorch's autograd engine launches the
backward pass from a thread of its own, so most training traces, the bench trace among
them, have two.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from ..trace import Trace

# globalTid's thread bits (tid_of in queries/_shared.sql)
_TID_BITS = 0xFFFFFF
RUNTIME_TABLE = "CUPTI_ACTIVITY_KIND_RUNTIME"
_CALL_COLUMNS = {"globalTid", "correlationId"}
# The sample (queries/fingerprint_thread_sample_export.sql): 128 runs of 1024 rows, 131k rows
# (~0.03 CPU s), so that a thread with under ~1% of its process's calls beside one with the
# rest is told apart from it by the sample alone (the bench trace's: 0.85%).
_SAMPLE_WINDOWS = 128
_SAMPLE_WIDTH = 1024
# More calls beside the sampled busiest threads than this and the query is read instead:
# SQLite's rows come to Python as objects (the bench trace has 43k).
_SQLITE_ROWS_MAX = 200_000
# The threads queries/fingerprint_thread_calls_export.sql skips (one per process): a trace
# with more processes reads the query.
_SKIPPED_MAX = 16


def thread_calls(trace: Trace) -> pl.DataFrame | None:
    """(global_pid, correlation_id, thread, tie) of the calls made on a thread that is not
    its process's busiest, or that ties (``queries/fingerprint_thread_calls.sql``); None
    when there are none (each process made its calls from one thread)."""
    calls = _export_thread_calls(trace)
    if calls is None:
        calls = trace.query("fingerprint_thread_calls")
    return None if calls.is_empty() else calls


def _export_thread_calls(trace: Trace) -> pl.DataFrame | None:
    """``queries/fingerprint_thread_calls.sql``'s rows, as SQLite selects them from the
    export; None where that query must be read instead: not a SQLite export read directly,
    a cache entry that holds the calls' columns (Parquet is the cheaper read), a runtime
    table without them, a value that is not an integer, or a sample that did not show a
    process's busiest thread (or one that may tie with it)."""
    if not _reads_export(trace):
        return None
    from .. import _resources
    from ..trace.parts import sqlite_rows_parts

    sample = trace._sqlite_rows(
        _resources.query("fingerprint_thread_sample_export"),
        {"windows": _SAMPLE_WINDOWS, "width": _SAMPLE_WIDTH},
    )
    if not all(type(tid) is int for tid, _, _ in sample):
        return None
    busiest = _sampled_busiest(sample)
    if not busiest or len(busiest) > _SKIPPED_MAX:
        return None
    skipped = [tid for tid, _ in busiest.values()]
    skipped += skipped[:1] * (_SKIPPED_MAX - len(skipped))  # a repeat compares as the first
    params = {f"t{i}": tid for i, tid in enumerate(skipped)}
    rows = sqlite_rows_parts(
        trace,
        RUNTIME_TABLE,
        _resources.query("fingerprint_thread_calls_export"),
        {**params, "limit": _SQLITE_ROWS_MAX + 1},
    )
    if len(rows) > _SQLITE_ROWS_MAX:
        return None
    if not all(type(tid) is int and type(cid) in (int, type(None)) for tid, cid in rows):
        return None
    ranks = _ranks(Counter(tid for tid, _ in rows), busiest)
    return None if ranks is None else _ranked_calls(rows, ranks)


def _sampled_busiest(sample: list[tuple[int, int, int]]) -> dict[int, tuple[int, int]] | None:
    """process -> (its most sampled thread, that thread's sampled calls), from the rows of
    ``queries/fingerprint_thread_sample_export.sql``; None when some process's second
    thread looks busy enough (its sampled calls scaled to the table, twice over, reach the
    busiest's sampled calls) that the busiest's sampled calls may not bound its count above
    the other's: the scan would be wasted (a thread per pass, say), so the query is read.
    A sample of the whole table counts exactly: the scan's counts decide (:func:`_ranks`)."""
    busiest: dict[int, tuple[int, int]] = {}
    scale = 1.0
    for tid, seen, span in sorted(sample, key=lambda row: (-row[1], row[0])):
        scale = max(span / (_SAMPLE_WINDOWS * _SAMPLE_WIDTH), 1.0)
        pid = tid - (tid & _TID_BITS)
        if pid not in busiest:
            busiest[pid] = (tid, seen)
        elif scale > 1 and 2 * seen * scale >= busiest[pid][1]:
            return None
    return busiest


def _reads_export(trace: Trace) -> bool:
    """Whether the calls' threads are best read by SQLite from the export itself."""
    trace.db  # noqa: B018  (opening the connection sets up the trace's cache, if any)
    if trace._sqlite is None or not _CALL_COLUMNS <= set(trace.tables.get(RUNTIME_TABLE, ())):
        return False
    lazy = trace._lazy
    cached = () if lazy is None or lazy.off else lazy.columns.get(RUNTIME_TABLE, ())
    return not _CALL_COLUMNS <= set(cached)


def _ranks(
    counts: Counter, busiest: dict[int, tuple[int, int]]
) -> dict[int, tuple[int, int | None]] | None:
    """Each counted thread's (rank in its process, tie group), the query's: most calls
    first, then id, the sampled busiest being rank 0; threads of one process with as many
    calls as each other a group, numbered from 1 by process, then calls (most first). None
    when a counted thread may outrank or tie with the sampled busiest (its exact count is
    not below the busiest's sampled one, a lower bound: a tie is not known without the
    busiest's exact count)."""
    by_process: dict[int, list[tuple[int, int]]] = {}
    for tid, n in counts.items():
        by_process.setdefault(tid - (tid & _TID_BITS), []).append((-n, tid))
    ranks: dict[int, tuple[int, int | None]] = {}
    ties = 0
    for pid, threads in sorted(by_process.items()):
        threads.sort()
        first = 0
        if pid in busiest:
            if -threads[0][0] >= busiest[pid][1]:  # may call as often as the busiest, or more
                return None
            first = 1
        shared = Counter(n for n, _ in threads)
        group = {}
        for n in sorted(n for n, same in shared.items() if same > 1):  # -calls: most first
            ties += 1
            group[n] = ties
        ranks.update((tid, (first + i, group.get(n))) for i, (n, tid) in enumerate(threads))
    return ranks


def _ranked_calls(rows: list[tuple], ranks: dict[int, tuple[int, int | None]]) -> pl.DataFrame:
    """(global_pid, correlation_id, thread, tie) of the rows of threads ranked above 0 or
    tied, distinct, in the query's order (process, correlation id; NULL last)."""
    import polars as pl

    kept = {
        (tid - (tid & _TID_BITS), cid, *ranks[tid]) for tid, cid in rows if ranks[tid] != (0, None)
    }
    schema = {
        "global_pid": pl.Int64,
        "correlation_id": pl.Int64,
        "thread": pl.Int32,
        "tie": pl.Int32,
    }
    frame = pl.DataFrame(list(kept), schema=schema, orient="row")
    return frame.sort(["global_pid", "correlation_id", "thread"], nulls_last=True)


def launch_threads(launches: pl.DataFrame, calls: pl.DataFrame) -> list[pl.Series]:
    """Each launch's thread rank (0: its process's busiest thread) and, when some threads
    tie, its thread's tie group (``tie``, NULL: none; :func:`untie` ranks them), by the key
    of its call: process and correlation id as one integer (pid << 32 | correlation id, as
    :func:`tracelens.fingerprint.members.range_steps`). ``launches`` need global_pid and
    correlation_id; ``calls``: :func:`thread_calls`. The few calls' ranks are looked up by
    that key (a replace), not joined: the bench trace's 5M launches and 43k calls, 0.25-0.28
    -> 0.16-0.19 CPU s."""
    import polars as pl

    pid = (pl.col("global_pid").cast(pl.Int64) // 2**24) & _TID_BITS
    key = pid * 2**32 | pl.col("correlation_id")
    called = calls.select(key).to_series()
    keys = launches.select(key).to_series()
    defaults = {"thread": 0}  # a call not listed: its process's busiest, untied
    if calls["tie"].is_not_null().any():
        defaults["tie"] = None
    return [
        keys.replace_strict(
            called, calls[name].cast(pl.Int32), default=default, return_dtype=pl.Int32
        ).alias(name)
        for name, default in defaults.items()
    ]


def untie(launches: pl.DataFrame) -> pl.DataFrame:
    """``launches`` (each with its variant, ``vid``: :func:`.units.with_variants`) with the
    threads of each tie group (:func:`launch_threads`) ranked among themselves by their own
    launch sequences, and no ``tie`` column: a thread's variants in its call order
    (correlation id; a CUDA graph's kernels, one call, by variant). Variant ids are in
    (normalized name, grid, block) order, so this is an order of the kernels the program
    launched, whatever ids the OS gave its threads or StringIds its names. Neither the
    first call of each nor when each started would do: which thread calls first is the
    host scheduler's choice. Threads whose sequences are the same keep their order by id:
    in a unit that holds all of both, either order lists the same variants (one whose steps
    split the two otherwise may still differ). Only the tied threads' launches are looked
    at; none tie in most traces (no ``tie`` column: nothing to do)."""
    import polars as pl

    if "tie" not in launches.columns:
        return launches
    from .order import _packed_key

    tied = (
        launches.lazy()
        .filter(pl.col("tie").is_not_null() & pl.col("vid").is_not_null())
        .select("tie", "thread", "correlation_id", "vid")
        .collect()
    )
    # each thread's launches in call order by one packed key (5M tied launches, unordered:
    # 0.3 CPU s; by the two columns, 0.6; the four columns sorted first, 3.5)
    by_call = _packed_key(tied, [("correlation_id", True), ("vid", True)])
    if by_call is None:
        by_call = [pl.col("correlation_id"), pl.col("vid")]
    # each tied thread's variants, a list; sorted by them (lexicographically, as Python
    # compares lists), each group's ranks are handed out again in that order (the old rank,
    # by id, after equal sequences): the k-th thread of a group takes its k-th least rank
    ranked = (
        tied.lazy()
        .group_by("tie", "thread")
        .agg(pl.col("vid").sort_by(by_call))
        .sort("tie", "vid", "thread")
        .select(
            key=pl.col("tie").cast(pl.Int64) * 2**32 | pl.col("thread"),
            rank=pl.col("thread").sort().over("tie"),
        )
        .collect()
    )
    key = pl.col("tie").cast(pl.Int64) * 2**32 | pl.col("thread")
    thread = key.replace_strict(
        ranked["key"], ranked["rank"], default=pl.col("thread"), return_dtype=pl.Int32
    )
    return launches.with_columns(thread=thread).drop("tie")
