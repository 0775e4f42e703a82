"""Big reads whose row order nothing depends on, on every DuckDB thread.

DuckDB's sqlite scanner has no batch indexes, so a result that must keep the export's row
order (``preserve_insertion_order``, on by default) is collected on one thread, and
``cursor.pl()`` then copies it into Arrow on that thread too: a 5M-row read of four columns
of an export ran ~90% on one thread (per-thread CPU 1.3-1.6 s and 0.4-0.9 s). Read with the
setting off through the relation API, which collects straight into Arrow, the scanner's
threads each read their own ranges of rowids: the same rows, the threads evenly busy, and
fewer CPU s (the 5M runtime calls of the NVTX bench trace, four columns: 1.40-1.45 CPU s
against 2.18-2.23; its 5M GPU operations 1.51-1.77 against 1.54-1.93; measured 2026-12-06
at load 25-40, per thread).

Row order then differs from run to run: only for reads whose every consumer sorts on the
rows' own columns, aggregates, or looks rows up by key. A read whose rows are matched to
another read by position (a second column read later) must not use it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

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
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
) -> pl.DataFrame:
    """The rows of ``sql`` (with bound ``params``) in any order, read on every DuckDB thread
    (see the module docstring). DuckDB's errors are raised as they are."""
    import polars as pl

    from .trace.lazy import CachingConnection

    with insertion_order_off(con):
        if isinstance(con, CachingConnection):  # it caches what the statement reads first
            table = con.arrow_table(sql, params or None)
        else:
            table = con.sql(sql, params=params or None).to_arrow_table()
    return pl.from_arrow(table)
