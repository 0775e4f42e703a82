"""Big reads whose row order nothing depends on, on every DuckDB thread.

DuckDB's sqlite scanner has no batch indexes, so a result that must keep the export's row
order (``preserve_insertion_order``, on by default) is collected on one thread, and
``cursor.pl()`` then copies it into Arrow on that thread too: the four columns of the 5M
runtime calls of the NVTX bench trace read by ``sqlite_scan`` took 1.6 CPU s on one thread
and 0.4 on the other. Read with the setting off through the relation API, which collects
straight into Arrow, the scanner's threads each read their own ranges of rowids: the same
rows, the threads evenly busy, and no more CPU s (through the trace's views, the 5M runtime
calls: 1.40-1.45 CPU s against 2.18-2.23; the 5M GPU operations 1.51-1.77 against
1.54-1.93; 2026-12-06, load 25-40). ``nvtx --gpu`` of that trace read directly, with every
other process stopped: 4.98-5.34 s wall against 6.35-6.60 (census 1.33-1.52 s).

Row order then differs from run to run: only for reads whose every consumer sorts on the
rows' own columns, aggregates, or looks rows up by key. A read whose rows are matched to
another read by position (a second column read later) must not use it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb
    import polars as pl

__all__ = ["insertion_order_off", "unordered_frame"]


@contextlib.contextmanager
def insertion_order_off(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """``preserve_insertion_order`` off on ``con`` for the block, put back after (also when
    the block fails); nothing changes when it is off already."""
    ordered = con.execute("SELECT current_setting('preserve_insertion_order')").fetchone()[0]
    if not ordered:
        yield
        return
    con.execute("SET preserve_insertion_order = false")
    try:
        yield
    finally:
        con.execute("SET preserve_insertion_order = true")


def unordered_frame(
    con: duckdb.DuckDBPyConnection, sql: str, *, contiguous: bool = False
) -> pl.DataFrame:
    """The rows of ``sql`` in any order, read on every DuckDB thread (see the module
    docstring). DuckDB's errors are raised as they are. ``contiguous``: each column in one
    chunk (the read comes in one per thread's batch), copied one column at a time, each
    chunked column dropped once copied: the copy holds one column twice, not the read.

    No bound parameters: a relation with parameters ran util_work's read of the 5M-kernel
    trace in 29 CPU s on one thread (2.2 through ``execute``). And not for reads DuckDB
    already runs on every thread in order: util_work (a union of three tables) was split
    1.2 / 1.0 CPU s over the two threads read in order, and gained nothing."""
    import polars as pl

    from .trace.lazy import CachingConnection

    with insertion_order_off(con):
        if isinstance(con, CachingConnection):  # it caches what the statement reads first
            table = con.arrow_table(sql)
        else:
            table = con.sql(sql).to_arrow_table()
    frame = pl.from_arrow(table)
    del table  # the frame shares its buffers
    if not contiguous:
        return frame
    columns = []
    for name in frame.columns:
        columns.append(frame.get_column(name).rechunk())
        frame = frame.drop(name)
    return pl.DataFrame(columns)
