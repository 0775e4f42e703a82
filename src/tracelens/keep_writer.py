"""Kept frames written to a cache entry on a thread of their own, while the command goes on.

A first run through the cache keeps what later runs read back (:mod:`tracelens.util_workfile`).
The diff keeps the whole trace's sorted work, 5M rows of 13 columns on the benchmark trace:
writing that Parquet file took 0.3-0.46 s of the diff's first cached run, on the main thread,
before anything after it could start. polars releases the GIL while it writes, so on a
second core the write costs no wall time beside the census, the accounting and the steps
that follow it.

One thread for the whole process, so the files are written one at a time and in the order
they were handed over (a bundle's figures after its parts: :func:`.util_workfile.write_bundle`);
the entry's lock (:func:`tracelens.cache.writing`) still orders them against other runs.
Whatever reads kept files first waits for the writes handed over so far (:func:`settle`), and
so does closing a trace: within one process a file is never looked for while it is being
written, and a closed trace has written everything it kept. The thread is not a daemon, so
an interpreter that exits without closing its traces still finishes the files.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from concurrent.futures import Future, ThreadPoolExecutor

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pending: list[Future[None]] = []


def submit(write: Callable[[], None]) -> None:
    """Run ``write`` on the writing thread, after every write submitted before it."""
    global _pool
    with _lock:
        if _pool is None:
            from concurrent.futures import ThreadPoolExecutor

            _pool = ThreadPoolExecutor(1, thread_name_prefix="tracelens-keep")
        _pending.append(_pool.submit(write))


def settle() -> None:
    """Wait for every write submitted so far; an exception one of them raised (a bug: the
    writes give up on OSError themselves) is raised here, after the others finished."""
    with _lock:
        pending = list(_pending)
        _pending.clear()
    error: BaseException | None = None
    for future in pending:
        exc = future.exception()
        if exc is not None and error is None:
            error = exc
    if error is not None:
        raise error


def _forget_in_child() -> None:
    """A forked child has no writing thread: it starts its own (a pool copied from the
    parent would queue writes that never run)."""
    global _pool, _lock
    _pool, _lock = None, threading.Lock()
    _pending.clear()


os.register_at_fork(after_in_child=_forget_in_child)
