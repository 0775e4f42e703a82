"""SQLite's own aggregates of an export read directly, run on a thread of their own while
the page's DuckDB and polars work goes on. On the 5M-kernel trace the page asks SQLite for
the stakeout's launch configurations (~1.6 CPU s: :mod:`.stakeoutread`) and the processes
with CUDA API calls (~0.35: :mod:`.infoshare`), each one thread's work for its whole
length; SQLite releases the GIL while it steps, so on a second core they cost no wall time
beside the sorts and sweeps, which keep one core busy for much of theirs. The thread reads
through a connection of its own (read-only, as the trace's), opened on its first query."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from ..trace import Trace


class Aside:
    """A thread that runs SQL on ``trace``'s export (use as a context manager: leaving it
    waits for what is running and closes the connection)."""

    def __init__(self, trace: Trace) -> None:
        self._trace = trace
        self._pool: ThreadPoolExecutor | None = None
        self._con: sqlite3.Connection | None = None

    def submit(self, sql: str, params: tuple | dict = ()) -> Future[list[tuple]]:
        """Start ``sql`` on the thread; its rows, or the trace's one-line error (as
        :meth:`Trace._sqlite_rows` raises it), come from the future's ``result()``."""
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(1, thread_name_prefix="tracelens-sqlite")
        return self._pool.submit(self._rows, sql, params)

    def _rows(self, sql: str, params: tuple | dict) -> list[tuple]:
        from .._sqlite import connect_readonly
        from ..errors import TraceError

        trace = self._trace
        try:
            if self._con is None:
                self._con = connect_readonly(trace._real_path, trace.path)
            return self._con.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise TraceError(
                trace.path, f"is corrupt (sqlite: {exc}); copy or export it again"
            ) from None

    def __enter__(self) -> Aside:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._pool is None:
            return
        if exc_info[0] is not None and self._con is not None:
            self._con.interrupt()  # the page failed: its queries' rows are not needed
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._con is not None:
            self._con.close()
