"""The host thread that launched each kernel, as its rank among its process's threads: a
unit's launches are taken one thread after another (:func:`.order.unit_order`), as they
are one process after another.

CUPTI numbers correlation ids per process, in the order the calls were made on any of its
threads, so in correlation order two threads' launches interleave as the host scheduler
happened to run them: a compute thread's a, b, c and a communication thread's AllReduce
read a, AllReduce, b, c in one run and a, b, AllReduce, c in the next, a launch-order
change on identical work (review8 B1; PyTorch DDP launches its collectives from a thread
of its own). Each thread's own sequence is its program's order.

The threads are ranked per process, the busiest (most CUDA API calls) first, then by id
(``queries/fingerprint_thread_calls.sql``): a count the program fixes, where which of two
threads calls first is the scheduler's choice too. Only the calls of the other threads are
kept (on the 5M-kernel bench trace, 43k of 5M), so a launch's rank is 0 unless its call is
among those. The query reads two columns of every call (0.5-0.8 CPU s on the bench
trace's 5M); asking SQLite first whether any process has two threads (its DISTINCT, ~0.3
CPU s) saved that on traces whose processes call from one thread each, but PyTorch's
autograd engine launches the backward pass from a thread of its own, so most training
traces, the bench trace among them, would pay both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from ..trace import Trace

# globalTid's thread bits (tid_of in queries/_shared.sql)
_TID_BITS = 0xFFFFFF


def thread_calls(trace: Trace) -> pl.DataFrame | None:
    """(global_pid, correlation_id, thread) of the calls made on a thread that is not its
    process's busiest (``queries/fingerprint_thread_calls.sql``); None when none is (each
    process made its calls from one thread)."""
    calls = trace.query("fingerprint_thread_calls")
    return None if calls.is_empty() else calls


def launch_threads(launches: pl.DataFrame, calls: pl.DataFrame) -> pl.Series:
    """Each launch's thread rank (0: its process's busiest thread), by the key of its call:
    process and correlation id as one integer (pid << 32 | correlation id, as
    :func:`tracelens.fingerprint.members.range_steps`). ``launches`` need global_pid and
    correlation_id; ``calls``: :func:`thread_calls`. The few calls' ranks are looked up by
    that key (a replace), not joined: the bench trace's 5M launches and 43k calls, 0.25-0.28
    -> 0.16-0.19 CPU s."""
    import polars as pl

    pid = (pl.col("global_pid").cast(pl.Int64) // 2**24) & _TID_BITS
    key = pid * 2**32 | pl.col("correlation_id")
    called = calls.select(key).to_series()
    return (
        launches.select(key)
        .to_series()
        .replace_strict(called, calls["thread"].cast(pl.Int32), default=0, return_dtype=pl.Int32)
        .alias("thread")
    )
