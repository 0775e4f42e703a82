"""Big reads of an export on a second DuckDB database, in a thread of their own, while the
caller goes on with work that leaves a core idle.

``nvtx --gpu`` reads the 5M runtime calls and the 5M GPU operations of the NVTX bench trace
(~0.5 s wall each on both cores) between stretches of polars and Python work that run
mostly on one core (the ranges' tree before the calls are needed, the calls' sweep before
the operations are): read meanwhile, 3.29-3.47 s wall became 2.96-3.17 s (same output, same
CPU s, ~0.07 GB more peak RSS: the operations arrive while the calls' sweep still holds its
frames). The reads cannot run on a cursor of the trace's own connection:
``preserve_insertion_order``, which the unordered read (:mod:`tracelens._fetch`) turns off,
is global to a DuckDB database (the trace's order-keeping statements would run without it
meanwhile), and the trace's temporary macros and variables are not seen by a cursor. A
second in-memory database over the same export has settings of its own; it gets the views,
the helpers and the path, and nothing else.

Only for an export read directly (not a parquetdir or a cache entry, read in a fraction of
the time, whose views follow the cache's state), and not when the trace's connection may
use one thread only (the reads would then take a second).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from .core import Trace


# Below this many CUDA API calls the reads take a few ms and a second database (~0.1 CPU s
# to open, the sqlite extension loaded again) costs more than the overlap saves.
MIN_CALLS = 500_000
_RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"


class Prefetch:
    """Reads of ``queries`` started at once, one after another, on a second database;
    :meth:`take` waits for one and hands its frame over (once). An error of a read is
    raised by the :meth:`take` of that read or of any later one, as DuckDB raised it (the
    caller translates it as it would its own read's). :meth:`close` when done, also on
    error: it stops what is still being read."""

    def __init__(self, trace: Trace, queries: dict[str, tuple[str, bool]]) -> None:
        """``queries``: name -> (query file, ``contiguous`` of ``_fetch.unordered_frame``)."""
        threads, memory = trace.db.execute(
            "SELECT current_setting('threads'), current_setting('memory_limit')"
        ).fetchone()
        self._frames: dict[str, pl.DataFrame] = {}
        self._ready = {name: threading.Event() for name in queries}
        self._error: BaseException | None = None
        self._con = None  # the second database's connection while it reads
        self._lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._run,
            args=(str(trace._real_path), dict(trace.tables), queries, int(threads), memory),
            name="tracelens-prefetch",
            daemon=True,
        )
        self._thread.start()

    @staticmethod
    def worthwhile(trace: Trace) -> bool:
        """Whether reads of ``trace`` are prefetched: read directly, on several threads, with
        at least MIN_CALLS CUDA API calls (their table's largest rowid: a b-tree lookup)."""
        if trace._sqlite is None or trace.parquet_dir is not None or trace._lazy is not None:
            return False
        threads = trace.db.execute("SELECT current_setting('threads')").fetchone()[0]
        if int(threads) < 2 or _RUNTIME not in trace.tables:
            return False
        top = trace._sqlite_rows(f"SELECT max(rowid) FROM {_RUNTIME}")[0][0]
        return (top or 0) >= MIN_CALLS

    def take(self, name: str) -> pl.DataFrame:
        self._ready[name].wait()
        if name not in self._frames:
            raise self._error  # type: ignore[misc]  # set before a lost read's event
        return self._frames.pop(name)

    def close(self) -> None:
        """Stop the reads still running, wait for the thread, drop what was not taken."""
        with self._lock:
            if self._con is not None and not all(e.is_set() for e in self._ready.values()):
                self._con.interrupt()
        self._thread.join()
        self._frames.clear()

    def _run(self, path, tables, queries, threads: int, memory: str) -> None:
        from .. import _engine, _resources, _schema
        from .._fetch import unordered_frame

        try:
            con = _engine.connect()
            with self._lock:
                self._con = con
            try:
                con.execute(f"SET threads = {threads}")
                # DuckDB's own figure as it printed it ('3.6 GiB'): SET takes no parameter
                con.execute("SET memory_limit = '" + memory.replace("'", "") + "'")
                con.execute("SET VARIABLE trace_path = $path", {"path": path})
                for view, (table, _cols) in _schema.VIEWS.items():
                    con.execute(_schema.view_sql(view, tables.get(table)))
                con.execute(_resources.query("_shared"))
                for name, (query, contiguous) in queries.items():
                    frame = unordered_frame(con, _resources.query(query), contiguous=contiguous)
                    self._frames[name] = frame
                    self._ready[name].set()
            finally:
                with self._lock:
                    self._con = None
                con.close()
        except BaseException as exc:  # noqa: BLE001 - raised again in the reader's thread
            self._error = exc
        finally:
            for event in self._ready.values():
                event.set()
