"""Filtered reads of one big export table by SQLite itself, on every core: the table's rowid
range is cut into one part per DuckDB thread and each part is read by its own SQLite
connection on its own Python thread (SQLite and DuckDB both let go of the GIL while they
run). One SQLite statement runs on one thread whatever DuckDB's thread count, and DuckDB
runs the ``sqlite_query`` calls of a UNION ALL one after another: stakeout's kernels of one
name out of 5M took 1.1 s wall that way, 0.43 s in two parts.

A part's statement is built by the caller from its own integers (no text of the user's);
its rowid bounds are ours too."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

# A statement on the rows whose rowids lie in [low, high] (inclusive, SQLite integers)
PartSql = Callable[[int, int], str]


def rowid_range(trace, table: str) -> tuple[int | None, int | None]:
    """The least and the greatest rowid of the export's ``table`` (None, None when it is
    empty). SQLite's min(rowid) and max(rowid) each read one page, not the table."""
    quoted = '"' + table.replace('"', '""') + '"'
    low = trace._sqlite_rows(f"SELECT min(rowid) FROM {quoted}")[0][0]
    high = trace._sqlite_rows(f"SELECT max(rowid) FROM {quoted}")[0][0]
    return low, high


def rowid_parts(trace, table: str, parts: int) -> list[tuple[int, int]]:
    """``table``'s rowids from its least to its greatest cut into at most ``parts`` runs of
    about the same length (inclusive bounds); none for an empty table."""
    low, high = rowid_range(trace, table)
    if low is None or high is None:
        return []
    parts = max(1, min(parts, high - low + 1))
    cuts = [low + (high - low + 1) * i // parts for i in range(parts)] + [high + 1]
    return [(cuts[i], cuts[i + 1] - 1) for i in range(parts)]


def duckdb_threads(con) -> int:
    """How many threads DuckDB may use on ``con`` (its ``threads`` setting)."""
    return int(con.execute("SELECT current_setting('threads')").fetchone()[0])


@contextlib.contextmanager
def sqlite_query_parts(trace, table: str, part_sql: PartSql, name: str):
    """Within the block the temporary view ``name`` holds the rows of ``part_sql`` over
    every part of ``table`` (see :func:`rowid_parts`), as DuckDB's ``sqlite_query`` gives
    them (every column as text), each part's rows in rowid order. Each part is read into a
    table of its own by a cursor of the trace's connection (its own connection to the same
    database: a temporary table would be that cursor's alone). Raises what DuckDB raises."""
    con = trace.db
    bounds = rowid_parts(trace, table, duckdb_threads(con)) or [(0, -1)]  # no row: columns
    parts = [f"tracelens_part_{i}" for i in range(len(bounds))]
    # ATTACH takes no bound parameter; the path is the trace's own, quoted. READ_ONLY:
    # SQLite opens the file read-only and writes nothing beside it. One attachment per
    # part: the statements of one attached database take turns on its one connection.
    path = str(trace._real_path).replace("'", "''")
    attached, made = [], []
    try:
        for part in parts:
            con.execute(f"ATTACH '{path}' AS {part}_export (TYPE sqlite, READ_ONLY)")
            attached.append(f"{part}_export")

        def read(i: int) -> None:
            cursor = con.cursor()
            try:
                cursor.execute(
                    f"CREATE OR REPLACE TABLE {parts[i]} AS "
                    f"SELECT * FROM sqlite_query('{parts[i]}_export', $q)",
                    {"q": part_sql(*bounds[i])},
                )
            finally:
                cursor.close()

        made = parts
        # each statement is one SQLite scan on one thread: DuckDB's second thread would only
        # wait for it (and cost CPU time doing so)
        with one_thread(con), ThreadPoolExecutor(len(bounds)) as pool:
            list(pool.map(read, range(len(bounds))))
        union = " UNION ALL ".join(f"SELECT * FROM {part}" for part in parts)
        con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {union}")
        try:
            yield name
        finally:
            con.execute(f"DROP VIEW IF EXISTS {name}")
    finally:
        for part in made:
            con.execute(f"DROP TABLE IF EXISTS {part}")
        for alias in attached:
            con.execute(f"DETACH {alias}")


def sqlite_rows_parts(trace, table: str, sql: str, params: dict):
    """The rows of ``sql`` over every part of ``table`` (see :func:`rowid_parts`), read by
    Python's sqlite3 on one read-only connection per part, in rowid order. ``sql`` keeps the
    rows whose rowids lie between its parameters ``$low_rowid`` and ``$high_rowid``
    (inclusive), bound with ``params`` for each part. Errors as ``Trace._sqlite_rows``. For
    statements that keep few rows: each comes to Python as a tuple of objects."""
    import sqlite3

    from .._sqlite import connect_readonly
    from ..errors import TraceError

    bounds = rowid_parts(trace, table, duckdb_threads(trace.db)) or [(0, -1)]
    if len(bounds) == 1:
        low, high = bounds[0]
        return trace._sqlite_rows(sql, {**params, "low_rowid": low, "high_rowid": high})

    def read(part: tuple[int, int]) -> list[tuple]:
        con = connect_readonly(trace._real_path, trace.path)
        try:
            low, high = part
            return con.execute(sql, {**params, "low_rowid": low, "high_rowid": high}).fetchall()
        finally:
            con.close()

    try:
        with ThreadPoolExecutor(len(bounds)) as pool:
            chunks = list(pool.map(read, bounds))
    except sqlite3.DatabaseError as exc:
        raise TraceError(
            trace.path, f"is corrupt (sqlite: {exc}); copy or export it again"
        ) from None
    return [row for chunk in chunks for row in chunk]


@contextlib.contextmanager
def one_thread(con):
    """Within the block ``con`` runs on one thread (see :func:`sqlite_query_parts`)."""
    threads = duckdb_threads(con)
    con.execute("SET threads = 1")
    try:
        yield
    finally:
        con.execute(f"SET threads = {int(threads)}")
