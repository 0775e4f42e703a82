"""``tracelens.open(path) -> Trace``: one nsys SQLite export, opened read-only."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _resources
from .._sqlite import NSYS_MARKER_TABLES, decode_text, explain_scan_error
from ..errors import MissingDataError, QueryError, TraceError
from .analyses import AnalysisMethods
from .damage import DamageMethods
from .info import InfoMethods, TraceInfo, graph_level_reason
from .opening import InputMethods
from .text import TextMethods
from .views import ViewMethods

if TYPE_CHECKING:
    from collections.abc import Iterable

    import duckdb
    import polars as pl

    from ..cache import Progress
    from ..rows import Rows

KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY_TABLE = "CUPTI_ACTIVITY_KIND_MEMCPY"
RUNTIME_TABLE = "CUPTI_ACTIVITY_KIND_RUNTIME"
MEMSET_TABLE = "CUPTI_ACTIVITY_KIND_MEMSET"
# Why an export whose kernel table has no row, and no copy or memset, has no GPU work
_EMPTY_KERNELS = "the export's kernel table is empty (no kernel ran in this capture)"


class Trace(InputMethods, ViewMethods, TextMethods, InfoMethods, AnalysisMethods, DamageMethods):
    """An nsys SQLite export. Use ``with tracelens.open(path) as trace:``.

    The file is opened read-only (SQLite ``mode=ro&immutable=1``; DuckDB's scanner opens it
    ``O_RDONLY``) and nothing is written next to it.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        cache: bool | None = None,
        progress: Progress | None = None,
    ) -> None:
        if isinstance(path, str | os.PathLike) and not os.fspath(path):
            # Path("") is ".", which said ".: is a directory" (`tracelens census "$TRACE"`
            # with TRACE unset)
            raise TraceError("''", "no trace given (the path is empty)")
        self.path = Path(path)
        self._sqlite: sqlite3.Connection | None = None
        self._duck: duckdb.DuckDBPyConnection | None = None
        self._raw: duckdb.DuckDBPyConnection | None = None  # a parquetdir's own tables
        self._closed = False
        self._info: TraceInfo | None = None
        self._origin_ns: int | None = None
        self._damaged: dict[str, int] = {}  # kind -> records that end before they start
        self._kept: dict[str, int] = {}  # kind -> records a whole-trace read kept
        self._kernel_rows: bool | None = None  # has_kernels(), once looked up
        self._cache_wanted = cache
        self._progress = progress
        # One line each, for the user: why the cache was not used (the CLI prints them).
        self.notices: list[str] = []
        # The Parquet directory the views read: a parquetdir input, or the cache entry.
        self.parquet_dir: Path | None = None
        self._parquet_tables: dict[str, tuple[str, ...]] = {}
        self._lazy = None  # a big SQLite export's cache, filled as statements need it
        self._export_loaded = False  # whether the DuckDB connection can read the export
        from .. import inputs

        if inputs.is_parquet_dir(self.path):
            self._open_parquet_input()
        else:
            self._open_sqlite_input()
        if not NSYS_MARKER_TABLES.intersection(self.tables):
            self.close()
            raise TraceError(
                self.path,
                "is a SQLite database but not an nsys export (no StringIds or TARGET_INFO "
                "tables); pass the file written by `nsys export --type sqlite`",
            )

    # -- context management -------------------------------------------------------------
    def __enter__(self) -> Trace:
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        # A DuckDB error that reached the end of the block from a statement run on ``db``
        # directly (not through query/sql, which explain their own) and that this export
        # caused (a damaged page, a value of the wrong type) leaves as its one TraceError
        # line, not as DuckDB's error: a command would call it an internal error.
        try:
            explained = self._escaped_error(exc) if exc is not None else None
            if explained is not None:
                raise explained from None
        finally:
            self.close()

    def _escaped_error(self, exc: BaseException) -> TraceError | None:
        """:meth:`_explain` of ``exc`` when it is a DuckDB error this export caused: with two
        traces open (a diff), the error may be the other's, so a corrupt-file message needs
        this file to fail SQLite's quick check, and a bad value to be found in it."""
        import sys

        duckdb = sys.modules.get("duckdb")
        if duckdb is None or not isinstance(exc, duckdb.Error) or self._closed:
            return None
        explained = self._explain(exc)
        if explained is None or self._sqlite is None:
            return explained
        said = str(explained)
        if "is corrupt (" in said:
            try:
                ok = self._sqlite.execute("PRAGMA quick_check(1)").fetchone()[0] == "ok"
            except sqlite3.DatabaseError:
                ok = False
            return None if ok else explained
        if "is damaged: a table." in said:  # the bad value is in no table of this file
            return None
        return explained

    def close(self) -> None:
        """Release the connections, once the files it keeps in its cache entry are written
        (:mod:`tracelens.keep_writer`); any later use of this Trace raises TraceError."""
        try:
            if getattr(self, "_lazy", None) is not None:
                from ..keep_writer import settle

                settle()
        finally:
            self._release()

    def _release(self) -> None:
        self._closed = True
        for name in ("_sqlite", "_duck", "_raw"):
            con = getattr(self, name, None)
            if con is not None:
                con.close()
                setattr(self, name, None)
        if getattr(self, "_copy_path", None) is not None:
            self._copy_path.unlink(missing_ok=True)
            self._copy_path = None
        if getattr(self, "_lazy", None) is not None:  # its cache entry may be evicted now
            self._lazy.release()

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise TraceError(self.path, "is closed; open it again with tracelens.open()")

    def __repr__(self) -> str:
        return f"Trace({str(self.path)!r})" + (" (closed)" if self._closed else "")

    # -- low level ----------------------------------------------------------------------
    def has_table(self, table: str) -> bool:
        return table in self.tables

    def require_kernels(self) -> None:
        """Raise MissingDataError unless the export has a kernel table the views can read
        with at least one kernel in it: a kernel table without rows (a cut-down or
        filtered export) is no kernel data, as an absent one is, with the same reason."""
        self.check_kernel_columns()
        if not self.has_kernels():
            if replays := self.graph_replays()[0]:
                raise MissingDataError(
                    self.path, f"no CUDA kernel data: {graph_level_reason(replays)}"
                )
            raise MissingDataError(self.path, f"no CUDA kernel data: {self._why_no_kernels()}")

    def require_cuda_work(self) -> None:
        """Raise MissingDataError unless the export has CUDA GPU work to account: kernels,
        or a copy or memset table (util, lineup); TraceError as :meth:`check_kernel_columns`."""
        self.check_kernel_columns()
        if self.has_kernels() or MEMCPY_TABLE in self.tables or MEMSET_TABLE in self.tables:
            return
        why = self._why_no_kernels()  # no copy or memset table: the reasons without them
        raise MissingDataError(self.path, f"no CUDA kernel, memcpy or memset data: {why}")

    def has_kernels(self) -> bool:
        """Whether the export's kernel table exists and holds at least one row (one
        lookup of its first row, remembered: no count, no scan)."""
        if KERNEL_TABLE not in self.tables:
            return False
        if self._kernel_rows is None:
            self._kernel_rows = bool(self._sqlite_rows(f'SELECT 1 FROM "{KERNEL_TABLE}" LIMIT 1'))
        return self._kernel_rows

    def check_kernel_columns(self) -> None:
        """Raise TraceError when the export's kernel table lacks a column every kernel row
        needs (an export schema older than nsys 2020.5, or a Parquet directory written
        without it): its views would read the column as NULL and drop every kernel. An
        export without a kernel table passes (:meth:`require_kernels` asks for one)."""
        if KERNEL_TABLE not in self.tables:
            return
        missing = {"start", "end", "demangledName", "shortName"} - set(self.tables[KERNEL_TABLE])
        if missing:
            raise TraceError(
                self.path,
                f"uses an nsys export schema tracelens does not support (kernel table lacks "
                f"{', '.join(sorted(missing))}); export it again with nsys 2020.5 or newer",
            )

    def _why_no_kernels(self) -> str:
        """Why an export without kernel rows has none: CUDA was traced and only copies or
        memsets ran (then say how many, and where to look), its kernel table is empty, or
        CUDA was not traced."""
        copies = self.table_rows(MEMCPY_TABLE)
        sets = self.table_rows(MEMSET_TABLE)
        if not (copies or sets):
            if KERNEL_TABLE in self.tables:
                return _EMPTY_KERNELS
            # nsys writes no kernel, memcpy or memset table when none ran: API calls then
            # say CUDA was traced (a program that only allocated, or failed early)
            if calls := self.table_rows(RUNTIME_TABLE):
                return (
                    "CUDA was traced and no kernel, copy or memset ran (it holds "
                    f"{calls:,} CUDA API {'call' if calls == 1 else 'calls'}: see `tracelens api`)"
                )
            return "was it captured with -t cuda?"
        held = " and ".join(
            f"{n:,} {one if n == 1 else many}"
            for n, one, many in (
                (copies, "memory copy", "memory copies"),
                (sets, "memset", "memsets"),
            )
            if n
        )
        return f"CUDA was traced and no kernel ran (it holds {held}: see `tracelens memory`)"

    def _sqlite_rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Rows of a query on the export's own tables (by their nsys names): through SQLite,
        or for a parquetdir input through DuckDB on its Parquet files."""
        self._check_open()
        if self._sqlite is None:
            return self._parquet_rows(sql, params)
        try:
            return self._sqlite.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise TraceError(
                self.path, f"is corrupt (sqlite: {exc}); copy or export it again"
            ) from None
        except UnicodeDecodeError as exc:
            # a column name damaged into bytes that are not UTF-8 (Python decodes the names
            # of a result's columns itself, whatever the text factory)
            said = decode_text(exc.object) if isinstance(exc.object, bytes) else str(exc)
            raise TraceError(
                self.path,
                f"is corrupt (a name in its schema is not UTF-8: '{said}'); copy or "
                "export it again",
            ) from None

    def _sqlite_batches(self, sql: str, size: int):
        """The rows of ``sql`` in lists of at most ``size`` (errors as ``_sqlite_rows``)."""
        self._check_open()
        try:
            cursor = self._sqlite.execute(sql)
            while rows := cursor.fetchmany(size):
                yield rows
        except sqlite3.DatabaseError as exc:
            raise TraceError(
                self.path, f"is corrupt (sqlite: {exc}); copy or export it again"
            ) from None

    @property
    def db(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection with the normalized views (see ``_schema.VIEWS``)."""
        self._check_open()
        if self._duck is None:
            self._duck = self._open_duckdb()
        return self._duck

    def _parquet_rows(self, sql: str, params: tuple) -> list[tuple]:
        import duckdb

        try:
            return self._raw.execute(sql, list(params)).fetchall()
        except duckdb.Error as exc:
            first = str(exc).strip().splitlines()[0]
            raise TraceError(self.path, f"cannot be read ({first}); export it again") from None

    def query(self, name: str, *, any_order: bool = False, **params: Any) -> pl.DataFrame:
        """Run ``queries/<name>.sql`` with bound parameters; a polars DataFrame back.
        A DuckDB error here is a bug in tracelens, so it is not translated (see ``sql``).
        ``any_order``: the rows in any order, read on every DuckDB thread
        (:func:`tracelens._fetch.unordered_query`; the order can differ from run to run),
        for big reads whose every consumer sorts on the rows' own columns, aggregates or
        looks rows up by key."""
        if not any_order:
            return self._execute(_resources.query(name), params, lambda cursor: cursor.pl())
        import duckdb

        from .._fetch import unordered_query

        con = self.db
        try:
            return unordered_query(con, _resources.query(name), params)
        except duckdb.Error as exc:
            raise self._explain(exc) or exc from None

    def query_rows(self, name: str, **params: Any) -> Rows:
        """Like ``query``, as plain rows (no polars or pyarrow): for small results that go
        straight to the command line."""
        from ..rows import Rows

        return self._execute(_resources.query(name), params, Rows.from_cursor)

    def sql(self, text: str, **params: Any) -> pl.DataFrame:
        """Run SQL against the normalized views (kernels, memcpys, memsets, graph_replays,
        runtime_calls, osrt_calls, nvtx_events, profiler_overhead, syncs, strings) with named
        parameters (``$name``).

        SQL that DuckDB rejects (unknown table or column, syntax, a missing parameter)
        raises QueryError with the first line of DuckDB's message."""
        import duckdb

        con = self.db  # opening the trace can fail too, but that is not the query's fault
        try:
            return self._execute(text, params, lambda cursor: cursor.pl(), con)
        except duckdb.Error as exc:
            lines = str(exc).strip().splitlines()
            raise QueryError(self.path, lines[0] if lines else type(exc).__name__) from None

    def _execute(self, text: str, params: dict[str, Any], fetch, con=None):
        import duckdb

        try:
            cursor = (con or self.db).execute(text, params)
            return fetch(cursor)
        except duckdb.Error as exc:
            raise self._explain(exc) or exc from None

    def _explain(self, exc: Exception) -> TraceError | None:
        """A DuckDB error caused by the export's content, as one TraceError line."""
        return explain_scan_error(self.path, self._sqlite, self.tables, exc)


def list_param(values: Iterable[Any] | None) -> str | None:
    """``values`` as one query parameter: a JSON list, which the query reads back with
    ``text_list($p)`` or ``bigint_list($p)`` (queries/_bound_lists.sql); None stays None.
    Bind a list this way, not as a Python list: DuckDB's Python client converts a list item
    by item, each with two failed attempts to import pandas (~0.1 ms an item)."""
    if values is None:
        return None
    import json

    return json.dumps(list(values))


def open(  # noqa: A001 - mirrors builtins.open on purpose
    path: str | os.PathLike[str],
    *,
    cache: bool | None = None,
    progress: Progress | None = None,
) -> Trace:
    """Open an nsys export read-only: a SQLite file, a ``.nsys-rep``/``.qdrep`` report (exported
    with ``nsys`` into the cache directory) or an ``nsys export --type parquetdir`` directory.

    ``cache``: read big SQLite exports through the columnar cache (None: unless
    ``TRACELENS_NO_CACHE`` is set; see :mod:`tracelens.cache`). ``progress(message,
    fraction)`` hears about cache builds and exports (what is written where, then 0..1) and
    about a cache that cannot be used; nothing is printed.
    """
    return Trace(path, cache=cache, progress=progress)
