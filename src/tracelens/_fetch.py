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

A query with parameters (:func:`unordered_query`) binds them as DuckDB variables (``SET
VARIABLE name = $value``, the value bound) that the statement reads with ``getvariable``: a
relation with bound parameters ran util_work's read of the 5M-kernel trace in 29 CPU s on
one thread, and a statement run through ``execute`` (bound parameters) collects on one
thread whatever the setting (util_work: 3.3-3.6 s wall for 3.4-3.7 CPU s; through
variables, unordered: 1.85-2.03 s for 3.5-3.6 CPU s; util_calls 2.3 s against 1.3-1.5;
2026-12-06, every other process stopped).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb
    import polars as pl

__all__ = ["insertion_order_off", "unordered_frame", "unordered_query"]

#: A bound parameter in a query's text (``$name``).
_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)\b")
#: The prefix of the DuckDB variables :func:`unordered_query` binds parameters as.
_VARIABLE = "tracelens_param_"


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

    No bound parameters (see :func:`unordered_query` for a query with them)."""
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


def unordered_query(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: Mapping[str, Any],
    *,
    contiguous: bool = False,
) -> pl.DataFrame:
    """:func:`unordered_frame` of a query with bound parameters: each ``$name`` of ``params``
    is bound (never pasted into the text) as the DuckDB variable ``tracelens_param_<name>``
    and read with ``getvariable``, which DuckDB folds into the plan as a constant, as it
    does a bound parameter (filters still reach the scan); the variables are reset after.
    A ``$name`` that ``params`` lacks stays as it is (DuckDB then says it is missing)."""
    text = _PARAMETER.sub(
        lambda m: f"getvariable('{_VARIABLE}{m[1]}')" if m[1] in params else m[0], sql
    )
    for name, value in params.items():
        con.execute(f"SET VARIABLE {_VARIABLE}{name} = $value", {"value": value})
    try:
        return unordered_frame(con, text, contiguous=contiguous)
    finally:
        for name in params:
            con.execute(f"RESET VARIABLE {_VARIABLE}{name}")
