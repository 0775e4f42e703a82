"""``tracelens.open(path) -> Trace``: one nsys SQLite export, opened read-only."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from . import _resources, _schema
from ._sqlite import (
    NSYS_MARKER_TABLES,
    check_file,
    connect_readonly,
    decode_text,
    explain_scan_error,
    sidecars,
    strings_are_utf8,
    table_columns,
)
from .errors import MissingDataError, QueryError, TraceError

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from .cache import Progress
    from .filters import EventFilter
    from .findings import Findings
    from .rows import Rows
    from .stakeout import Stakeout
    from .steps import Steps
    from .timeline import Timeline
    from .util import Util


class Filters(TypedDict, total=False):
    """The keyword filters every analysis method takes (see :meth:`Trace.filter`)."""

    device: int  # CUDA device ordinal (``tracelens info`` shows each GPU's)
    pid: int  # process id
    stream: int  # CUDA stream id
    start: int | str  # window start: ns from session start, or "1.5s", "200ms"
    end: int | str  # window end
    nvtx: str  # GPU work launched inside NVTX ranges with this label (glob allowed)
    step: int | str | tuple[int, int]  # GPU work of step N or steps "A:B" (see Trace.steps)
    steps: int | str | tuple[int, int]  # the same as step (the CLI's --steps A:B)


KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
# NVTX rows read through Python per batch (load_nvtx_text): bounded memory on 10M ranges.
NVTX_BATCH_ROWS = 250_000
# CUDA graph replays traced at graph level: their kernels are missing from KERNEL_TABLE.
GRAPH_TABLE = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"


@dataclass(frozen=True)
class GpuInfo:
    """One GPU as the export describes it (fields the file lacks are None)."""

    id: int | None
    name: str | None
    bus_location: str | None = None
    sm_count: int | None = None
    memory_bytes: int | None = None
    compute_capability: str | None = None
    cuda_device: int | None = None


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    name: str | None


@dataclass(frozen=True)
class EventCount:
    kind: str  # kernel, memcpy, memset, runtime, nvtx, graph (CUDA graph replays)
    table: str  # the nsys table it comes from
    present: bool  # False when the export has no such table (nothing was captured)
    count: int
    first_ns: int | None
    last_ns: int | None


@dataclass(frozen=True)
class TraceInfo:
    """What the export is: versions, hardware, processes, span and event counts."""

    path: str
    size_bytes: int
    nsys_version: str | None
    schema_version: str | None
    metadata_table: str | None  # META_DATA_EXPORT, EXPORT_META_DATA or None (<= 2021)
    session_start_utc_ns: int | None
    start_ns: int | None  # first event of any kind, ns from session start
    end_ns: int | None
    gpus: tuple[GpuInfo, ...]
    processes: tuple[ProcessInfo, ...]
    events: tuple[EventCount, ...]
    # Summed duration of the CUDA graph replays traced at graph level (the `graph` events),
    # ns: GPU time whose kernels the export does not list. 0 without such replays.
    graph_replay_ns: int
    tables: tuple[str, ...] = field(repr=False)
    metadata: dict[str, str] = field(repr=False)

    @property
    def duration_ns(self) -> int | None:
        if self.start_ns is None or self.end_ns is None:
            return None
        return self.end_ns - self.start_ns

    def count(self, kind: str) -> int:
        return next((e.count for e in self.events if e.kind == kind), 0)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["duration_ns"] = self.duration_ns
        return d


_EVENT_KINDS = (
    ("kernel", "kernels"),
    ("memcpy", "memcpys"),
    ("memset", "memsets"),
    ("runtime", "runtime_calls"),
    ("nvtx", "nvtx_events"),
    ("graph", "graph_replays"),
)


def _utf8(text: str) -> bool:
    """Whether ``text`` is valid Unicode (a path with bytes that are not UTF-8 holds
    surrogate escapes, which DuckDB cannot take)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def graph_level_reason(replays: int) -> str:
    """Why kernels are missing from an export with ``replays`` graph-level CUDA graph replays
    (for messages that say a kernel was not found)."""
    one = replays == 1
    return (
        f"its {replays:,} CUDA graph {'replay was' if one else 'replays were'} traced at graph "
        "level, which records no kernels; profile with --cuda-graph-trace=node"
    )


class Trace:
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
        self.path = Path(path)
        self._sqlite: sqlite3.Connection | None = None
        self._duck: duckdb.DuckDBPyConnection | None = None
        self._raw: duckdb.DuckDBPyConnection | None = None  # a parquetdir's own tables
        self._closed = False
        self._info: TraceInfo | None = None
        self._origin_ns: int | None = None
        self._cache_wanted = cache
        self._progress = progress
        # One line each, for the user: why the cache was not used (the CLI prints them).
        self.notices: list[str] = []
        # The Parquet directory the views read: a parquetdir input, or the cache entry.
        self.parquet_dir: Path | None = None
        self._parquet_tables: dict[str, tuple[str, ...]] = {}
        from . import inputs

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

    def _open_sqlite_input(self) -> None:
        from . import inputs

        read = self.path
        if inputs.is_report(self.path):
            read = inputs.export_report(self.path, self._cache_settings(), self._progress)
        check_file(read)
        # DuckDB's scanner opens with O_NOFOLLOW: give it the real file.
        self._real_path = self._source_file = read.resolve()
        self._sqlite = connect_readonly(self._real_path, self.path)
        self.tables: dict[str, tuple[str, ...]] = table_columns(self._sqlite, self.path)
        if beside := sidecars(self._real_path, self.path):
            self._real_path = self._private_copy(beside)
        elif not _utf8(str(self._real_path)):
            self._real_path = self._private_copy([], why="its path is not UTF-8")

    def _private_copy(self, beside: list[Path], why: str | None = None) -> Path:
        """DuckDB's scanner opens the file read-write, so with a -wal or -journal beside it
        SQLite would create or rewrite files there; and it takes its path as UTF-8 text.
        Give the scanner a copy of the file alone (in the cache directory, removed on close);
        Python's sqlite3 keeps reading the original immutably, which ignores those files
        too. ``why``: the reason when it is not files ``beside`` the trace."""
        import tempfile

        names = ", ".join(p.name for p in beside)
        why = why or f"{names} beside it, which DuckDB's reader would write to"
        root = self._cache_settings().root
        try:
            root.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=".copy-", suffix=".sqlite", dir=root)
            with os.fdopen(fd, "wb") as out, self._source_file.open("rb") as src:
                shutil.copyfileobj(src, out, 1 << 20)
        except OSError as exc:
            raise TraceError(
                self.path,
                f"cannot be read in place ({why}) and no private copy can be made in {root} "
                f"({exc.strerror}); copy the .sqlite file alone to another directory and pass "
                "the copy",
            ) from None
        self._copy_path = Path(name)
        if beside:
            notice = f"{names} beside {self.path.name} left alone; reading a private copy in {root}"
        else:
            notice = f"{self.path.name}: {why}; reading a private copy in {root}"
        self.notices.append(notice)
        if self._progress:
            self._progress(notice, None)
        return self._copy_path

    def _open_parquet_input(self) -> None:
        """A directory from ``nsys export --type parquetdir``: its tables are read in place
        (the views from Parquet, the small tables through a connection of their own)."""
        from . import _engine, inputs

        self._real_path = self.path.resolve()
        self.parquet_dir = self._real_path
        self._raw = _engine.connect()
        self.tables = inputs.parquet_tables(self._raw, self._real_path)
        self._raw.execute("SET VARIABLE parquet_dir = $d", {"d": str(self._real_path)})
        for table in self.tables:
            self._raw.execute(
                f"CREATE VIEW {_schema._quote(table)} AS "
                f"SELECT * FROM {_schema.source_sql(table, 'parquet')}"
            )

    def _cache_settings(self):
        from . import cache

        return cache.Settings.from_env(self._cache_wanted)

    # -- context management -------------------------------------------------------------
    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the connections; any later use of this Trace raises TraceError."""
        self._closed = True
        for name in ("_sqlite", "_duck", "_raw"):
            con = getattr(self, name, None)
            if con is not None:
                con.close()
                setattr(self, name, None)
        if getattr(self, "_copy_path", None) is not None:
            self._copy_path.unlink(missing_ok=True)
            self._copy_path = None

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
        """Raise MissingDataError unless the export has a kernel table the views can read."""
        if KERNEL_TABLE not in self.tables:
            if replays := self.graph_replays()[0]:
                raise MissingDataError(
                    self.path, f"no CUDA kernel data: {graph_level_reason(replays)}"
                )
            raise MissingDataError(self.path, "no CUDA kernel data: was it captured with -t cuda?")
        missing = {"start", "end", "demangledName", "shortName"} - set(self.tables[KERNEL_TABLE])
        if missing:
            raise TraceError(
                self.path,
                f"uses an nsys export schema tracelens does not support (kernel table lacks "
                f"{', '.join(sorted(missing))}); export it again with nsys 2020.5 or newer",
            )

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

    def _open_duckdb(self) -> duckdb.DuckDBPyConnection:
        import duckdb

        from . import _engine

        con = _engine.connect()
        try:
            return self._install_views(con)
        except duckdb.Error as exc:
            con.close()
            raise self._explain(exc) or exc from None

    def _install_views(self, con) -> duckdb.DuckDBPyConnection:
        con.execute(_resources.query("_memcpy_labels"))
        if self.parquet_dir is not None:
            self._install_parquet(con, self.parquet_dir, self.tables)
        else:
            con.execute("SET VARIABLE trace_path = $path", {"path": str(self._real_path)})
            for view, (table, _cols) in _schema.VIEWS.items():
                con.execute(_schema.view_sql(view, self.tables.get(table)))
            self._load_strings(con)
            entry = self._cache_entry(con)
            if entry is not None:
                from . import inputs

                self.parquet_dir = entry
                self._install_parquet(con, entry, inputs.parquet_tables(con, entry), guard=False)
        con.execute(_resources.query("_shared"))
        con.execute(_resources.query("_issued_transfers"))
        return con

    def _install_parquet(
        self, con, directory: Path, tables: dict[str, tuple[str, ...]], guard: bool = True
    ) -> None:
        """Point the views (and ``strings``) at ``directory``'s ``<table>.parquet`` files."""
        con.execute("SET VARIABLE parquet_dir = $d", {"d": str(directory)})
        for view, (table, _cols) in _schema.VIEWS.items():
            con.execute(_schema.view_sql(view, tables.get(table), "parquet", guard))
        con.execute("DROP TABLE IF EXISTS strings")
        if "StringIds" in tables:
            con.execute(
                "CREATE TEMP TABLE strings AS SELECT CAST(id AS BIGINT) AS id, "
                f"CAST(value AS VARCHAR) AS value FROM {_schema.source_sql('StringIds', 'parquet')}"
            )
        else:
            con.execute("CREATE TEMP TABLE strings (id BIGINT, value VARCHAR)")
        self._parquet_tables = tables

    def _load_strings(self, con) -> None:
        import duckdb

        if "StringIds" not in self.tables:
            con.execute("CREATE TEMP TABLE strings (id BIGINT, value VARCHAR)")
            return
        missing = {"id", "value"} - set(self.tables["StringIds"])
        if missing:
            raise TraceError(
                self.path,
                f"is damaged: StringIds (the table of names) has no {', '.join(sorted(missing))} "
                "column; export it again",
            )
        try:
            valid = strings_are_utf8(self._sqlite)
        except sqlite3.DatabaseError as exc:
            raise TraceError(
                self.path, f"is corrupt (sqlite: {exc}); copy or export it again"
            ) from None
        if not valid:
            self._load_strings_slowly(con)
            return
        try:
            # The fast path: DuckDB reads StringIds itself (and pyarrow is never imported).
            con.execute(
                "CREATE TEMP TABLE strings AS SELECT CAST(id AS BIGINT) AS id, value "
                "FROM sqlite_scan(getvariable('trace_path'), 'StringIds')"
            )
        except duckdb.Error as exc:
            if "unicode" not in str(exc).lower():
                raise
            # Real exports can hold bytes that are not UTF-8, which fail DuckDB's scan: read
            # them through Python's sqlite3 instead, where they become \xNN escapes.
            self._load_strings_slowly(con)

    def _cache_entry(self, con) -> Path | None:
        """The cache entry to read (built now if needed), or None to read the export
        directly: caching is off, the trace is small, or the cache cannot be written (then
        a notice says so)."""
        import duckdb

        from . import cache

        settings = self._cache_settings()
        if not settings.enabled or self._source_file.stat().st_size < settings.min_bytes:
            return None
        ident = cache.identity(self._source_file)
        entry = cache.lookup(settings.root, ident)
        if entry is not None:
            return entry
        try:
            return cache.build(
                con, self._source_file, ident, self._cache_tables(con), settings, self._progress
            )
        except (OSError, duckdb.IOException) as exc:
            reason = getattr(exc, "strerror", None) or str(exc).strip().splitlines()[0]
            notice = (
                f"cannot cache {self.path.name} in {settings.root} ({reason}); reading the "
                "trace directly"
            )
            self.notices.append(notice)
            if self._progress:
                self._progress(notice, None)
            return None
        finally:
            # Built for the cache only: load_nvtx_text makes it again (from the entry, with
            # the nvtx_ranges macro, which needs the _shared helpers installed after this).
            con.execute("DROP TABLE IF EXISTS nvtx_text")

    def _cache_tables(self, con) -> list:
        """What a cache entry holds: each view's table present in the export (its columns
        as the view has them), the decoded strings, and the NVTX events with their text."""
        from .cache import Table

        def weight(table: str) -> float:
            # rows (the largest rowid: a b-tree lookup, no scan) x columns read
            rows = self._sqlite_rows(f"SELECT max(rowid) FROM {_schema._quote(table)}")
            return float(rows[0][0] or 0) * len(_schema.VIEWS_BY_TABLE[table][1]) + 1

        tables = [
            Table(f"{table}.parquet", f"SELECT * FROM {_schema._quote(view)}", weight(table))
            for view, (table, _cols) in _schema.VIEWS.items()
            if table in self.tables and view != "nvtx_events"
        ]
        tables.append(Table("StringIds.parquet", "SELECT * FROM strings"))
        if "NVTX_EVENTS" in self.tables:
            self._load_nvtx_text_into(con, with_ranges=False)
            tables.append(
                Table("NVTX_EVENTS.parquet", "SELECT * FROM nvtx_text", weight("NVTX_EVENTS"))
            )
        return tables

    def _load_strings_slowly(self, con: duckdb.DuckDBPyConnection) -> None:
        """StringIds through Python's sqlite3, bytes that are not UTF-8 as \\xNN escapes."""
        import pyarrow as pa

        ids, values = [], []
        for sid, value in self._sqlite_rows("SELECT id, value FROM StringIds"):
            ids.append(sid)
            values.append(decode_text(value))
        con.execute("DROP TABLE IF EXISTS strings")
        con.register(
            "_string_ids",
            pa.table({"id": pa.array(ids, pa.int64()), "value": pa.array(values, pa.string())}),
        )
        con.execute("CREATE TEMP TABLE strings AS SELECT * FROM _string_ids")
        con.unregister("_string_ids")

    def load_nvtx_text(self) -> None:
        """Create the ``nvtx_text`` table, once: every ``nvtx_events`` column plus ``text``
        (the free-text label; a range's label is ``coalesce(text, strings[textId])``).

        DuckDB reads it (with ``row_id``, the rowid); ``text`` may hold bytes that are not
        UTF-8, which DuckDB rejects, and then the table is read through Python's sqlite3 in
        batches (those bytes become \\xNN, as ``decode_text`` does). Only queries over NVTX
        ranges need it: call this before running them.
        """
        self._load_nvtx_text_into(self.db)

    def _load_nvtx_text_into(self, con, with_ranges: bool = True) -> None:
        import duckdb

        exists = "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'nvtx_text'"
        if con.execute(exists).fetchone()[0]:
            return
        table, columns = _schema.VIEWS["nvtx_events"]
        # row_id is the NVTX_EVENTS rowid: nsys stats calls it RangeId.
        names = ["row_id"] + [name for name, _type in columns] + ["text"]
        typed = ", ".join(f"{_schema._quote(n)} BIGINT" for n in names[:-1]) + ", text VARCHAR"
        if self.parquet_dir is not None:
            # Parquet holds text as UTF-8 already (the cache wrote it decoded); row_id is
            # there when the cache wrote it, NULL in a directory nsys exported.
            present = set(self._parquet_tables.get(table, ()))
            if present:
                select = ", ".join(
                    f"CAST({_schema._quote(n)} AS BIGINT) AS {_schema._quote(n)}"
                    if n in present
                    else f"CAST(NULL AS BIGINT) AS {_schema._quote(n)}"
                    for n in names[:-1]
                )
                text = "CAST(text AS VARCHAR)" if "text" in present else "CAST(NULL AS VARCHAR)"
                con.execute(
                    f"CREATE TEMP TABLE nvtx_text AS SELECT {select}, {text} AS text "
                    f"FROM {_schema.source_sql(table, 'parquet')}"
                )
                if with_ranges:
                    con.execute(_resources.query("_nvtx_ranges"))
                return
        if table not in self.tables:
            con.execute(f"CREATE TEMP TABLE nvtx_text ({typed})")
        else:
            present = set(self.tables[table]) | {"row_id"}
            select = ", ".join(
                "rowid AS row_id" if n == "row_id" else _schema._quote(n) if n in present
                else f"NULL AS {_schema._quote(n)}"
                for n in names
            )  # fmt: skip
            sql = f"SELECT {select} FROM {_schema._quote(table)}"
            try:
                self._load_nvtx_text_fast(con, names, sql)
            except duckdb.Error as exc:
                if "utf" not in str(exc).lower() and "unicode" not in str(exc).lower():
                    raise
                # Bytes that are not UTF-8 in a label: read through Python instead.
                con.execute("DROP TABLE IF EXISTS nvtx_text")
                con.execute(f"CREATE TEMP TABLE nvtx_text ({typed})")
                self._load_nvtx_text_slowly(con, names, sql)
        if with_ranges:
            con.execute(_resources.query("_nvtx_ranges"))

    def _load_nvtx_text_fast(self, con, names: list[str], sql: str) -> None:
        """nvtx_text read by DuckDB itself (SQLite's rowid is only reachable through an
        attached database: sqlite_scan does not expose it)."""
        # ATTACH takes no bound parameter; the path is the trace's own, quoted. READ_ONLY:
        # SQLite opens the file read-only and writes nothing beside it.
        path = str(self._real_path).replace("'", "''")
        con.execute(f"ATTACH '{path}' AS nvtx_source (TYPE sqlite, READ_ONLY)")
        try:
            casts = ", ".join(
                f"CAST({_schema._quote(n)} AS BIGINT) AS {_schema._quote(n)}" for n in names[:-1]
            )
            con.execute(
                f"CREATE TEMP TABLE nvtx_text AS SELECT {casts}, CAST(text AS VARCHAR) AS text "
                "FROM sqlite_query('nvtx_source', $sql)",
                {"sql": sql},
            )
        finally:
            con.execute("DETACH nvtx_source")

    def _load_nvtx_text_slowly(self, con, names: list[str], sql: str) -> None:
        """nvtx_text through Python's sqlite3, labels decoded as ``decode_text`` does; in
        batches, so that millions of ranges never sit in Python objects at once."""
        import pyarrow as pa

        for rows in self._sqlite_batches(sql, NVTX_BATCH_ROWS):
            values = list(zip(*rows, strict=True))
            data = {
                n: pa.array(v, pa.int64()) for n, v in zip(names[:-1], values[:-1], strict=True)
            }
            data["text"] = pa.array([decode_text(t) for t in values[-1]], pa.string())
            con.register("_nvtx_text", pa.table(data))
            con.execute("INSERT INTO nvtx_text SELECT * FROM _nvtx_text")
            con.unregister("_nvtx_text")

    def query(self, name: str, **params: Any) -> pl.DataFrame:
        """Run ``queries/<name>.sql`` with bound parameters; a polars DataFrame back.
        A DuckDB error here is a bug in tracelens, so it is not translated (see ``sql``)."""
        return self._execute(_resources.query(name), params, lambda cursor: cursor.pl())

    def query_rows(self, name: str, **params: Any) -> Rows:
        """Like ``query``, as plain rows (no polars or pyarrow): for small results that go
        straight to the command line."""
        from .rows import Rows

        return self._execute(_resources.query(name), params, Rows.from_cursor)

    def sql(self, text: str, **params: Any) -> pl.DataFrame:
        """Run SQL against the normalized views (kernels, memcpys, memsets, runtime_calls,
        nvtx_events, syncs, strings) with named parameters (``$name``).

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

    # -- metadata -----------------------------------------------------------------------
    def _metadata(self) -> tuple[str | None, dict[str, str]]:
        for table in ("META_DATA_EXPORT", "EXPORT_META_DATA"):
            if table in self.tables:
                rows = self._sqlite_rows(f'SELECT name, value FROM "{table}"')
                return table, {decode_text(k): decode_text(v) for k, v in rows}
        return None, {}

    def _nsys_version(self, meta: dict[str, str]) -> str | None:
        if meta.get("EXPORT_PRODUCT_VERSION"):
            return meta["EXPORT_PRODUCT_VERSION"]
        if "TARGET_INFO_SYSTEM_ENV" in self.tables:
            # Filter in SQL: other rows of this table hold bytes that are not UTF-8.
            rows = self._sqlite_rows(
                "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'TargetInstallDir'"
            )
            for (value,) in rows:
                m = re.search(r"(20\d\d\.\d+(?:\.\d+)*)", decode_text(value) or "")
                if m:
                    return m.group(1)
        return None

    def _gpus(self) -> tuple[GpuInfo, ...]:
        if "TARGET_INFO_GPU" not in self.tables:
            return ()
        cols = self.tables["TARGET_INFO_GPU"]
        rows = self._sqlite_rows('SELECT * FROM "TARGET_INFO_GPU"')
        extra: dict[int, dict[str, Any]] = {}
        if "TARGET_INFO_CUDA_GPU" in self.tables:  # nsys <= 2021 keeps SMs/memory here
            ccols = self.tables["TARGET_INFO_CUDA_GPU"]
            for r in self._sqlite_rows('SELECT * FROM "TARGET_INFO_CUDA_GPU"'):
                d = dict(zip(ccols, r, strict=False))
                extra[d.get("deviceId")] = d
        gpus = []
        for r in rows:
            d = dict(zip(cols, r, strict=False))
            gid = d.get("id", d.get("deviceId"))
            e = extra.get(gid, {})
            major = d.get("computeMajor", e.get("computeCapabilityMajor"))
            minor = d.get("computeMinor", e.get("computeCapabilityMinor"))
            gpus.append(
                GpuInfo(
                    id=gid,
                    name=decode_text(d.get("name")),
                    bus_location=decode_text(d.get("busLocation", e.get("pciBusId"))),
                    sm_count=d.get("smCount", e.get("numMultiprocessors")),
                    memory_bytes=d.get("totalMemory", e.get("globalMemorySize")),
                    compute_capability=f"{major}.{minor}" if major is not None else None,
                    # the CUDA ordinal that activity rows (and --device) use; nsys <= 2021
                    # describes GPUs by it directly (deviceId)
                    cuda_device=d.get("cuDevice", d.get("deviceId")),
                )
            )
        return tuple(sorted(gpus, key=lambda g: (g.id is None, g.id)))

    def _processes(self, counts: pl.DataFrame) -> tuple[ProcessInfo, ...]:
        pids = sorted({pid for kind_pids in counts["pids"].to_list() for pid in kind_pids or ()})
        names: dict[int, str | None] = {}
        if "PROCESSES" in self.tables and "pid" in self.tables["PROCESSES"]:
            for pid, name in self._sqlite_rows("SELECT pid, name FROM PROCESSES"):
                names.setdefault(pid, decode_text(name))
        return tuple(ProcessInfo(pid, names.get(pid)) for pid in pids)

    @property
    def origin_ns(self) -> int:
        """The start of the first event of any kind, ns from session start (0 when there is
        none): what the Start columns of stakeout and timeline count from. Same as
        ``info.start_ns``, without reading the counts and processes when info is not loaded."""
        self._check_open()
        if self._info is not None:
            return self._info.start_ns or 0
        if self._origin_ns is None:
            self._origin_ns = self.query_rows("_first_event").data[0][0] or 0
        return self._origin_ns

    @property
    def info(self) -> TraceInfo:
        """What the export is (read once, then kept; raises TraceError once closed)."""
        self._check_open()
        if self._info is None:
            self._info = self._read_info()
        return self._info

    def _read_info(self) -> TraceInfo:
        table, meta = self._metadata()
        counts = self.query("_event_counts")
        by_kind = {row["kind"]: row for row in counts.iter_rows(named=True)}
        events = []
        for kind, view in _EVENT_KINDS:
            source = _schema.VIEWS[view][0]
            row = by_kind[kind]
            events.append(
                EventCount(
                    kind,
                    source,
                    source in self.tables,
                    row["events"],
                    row["first_ns"],
                    row["last_ns"],
                )
            )
        firsts = [e.first_ns for e in events if e.first_ns is not None]
        lasts = [e.last_ns for e in events if e.last_ns is not None]
        session_start = self.session_start_utc_ns()
        return TraceInfo(
            path=str(self.path),
            size_bytes=self.path.stat().st_size,
            nsys_version=self._nsys_version(meta),
            schema_version=meta.get("EXPORT_SCHEMA_VERSION"),
            metadata_table=table,
            session_start_utc_ns=session_start,
            start_ns=min(firsts) if firsts else None,
            end_ns=max(lasts) if lasts else None,
            gpus=self._gpus(),
            processes=self._processes(counts),
            events=tuple(events),
            graph_replay_ns=self.graph_replays()[1],
            tables=tuple(sorted(self.tables)),
            metadata=meta,
        )

    # -- what the views leave out -------------------------------------------------------
    def graph_replays(self, where: EventFilter | None = None) -> tuple[int, int]:
        """(replays, summed duration in ns) of the CUDA graph replays traced at graph level
        that pass ``where`` (device, pid, stream, time window: the rules of census).

        nsys traces CUDA graphs at graph level by default (``--cuda-graph-trace=graph``):
        each replay is one row of CUPTI_ACTIVITY_KIND_GRAPH_TRACE, and its kernels, memcpys
        and memsets are in no other table. (0, 0) when the export has no such table.
        """
        if GRAPH_TABLE not in self.tables:
            return 0, 0  # the common case costs nothing: no query, no DuckDB
        from .filters import EventFilter

        rows = self.query_rows("_graph_replays", **(where or EventFilter()).params())
        replays, total_ns = rows.data[0]
        return int(replays), int(total_ns)

    def graph_note(self, where: EventFilter | None = None) -> str | None:
        """One sentence saying what every kernel and memory figure leaves out: the CUDA
        graph replays traced at graph level that pass ``where``; None when there are none
        (then nothing is left out).

        The sentence has no prefix; the command line prints it as ``note: …`` after a
        table or Markdown output and as ``tracelens: note: …`` on stderr for csv/json.
        """
        replays, total_ns = self.graph_replays(where)
        if not replays:
            return None
        from .units import fmt_ns

        one = replays == 1
        return (
            f"{replays:,} CUDA graph {'replay' if one else 'replays'} "
            f"({fmt_ns(total_ns)} of GPU time) {'is' if one else 'are'} not broken down by "
            f"kernel and {'is' if one else 'are'} not in these numbers; profile with "
            f"--cuda-graph-trace=node to see {'its' if one else 'their'} kernels"
        )

    # -- analyses -----------------------------------------------------------------------
    # Each takes its own options and the keyword filters of :class:`Filters` (device=, pid=,
    # stream=, start=, end=, nvtx=, step=), or an EventFilter as ``where``; all times in ns.
    def filter(self, where: EventFilter | None = None, **filters: Unpack[Filters]) -> EventFilter:
        """``where`` (default: everything) narrowed by the keyword filters: ``device``,
        ``pid``, ``stream`` (ids), ``start``/``end`` (ns from session start, or text such as
        ``"1.5s"``), ``nvtx`` (GPU work launched in the NVTX ranges with this label or glob),
        ``step`` or ``steps`` (N, ``"N"``, ``"A:B"`` or (A, B): the GPU work launched inside
        those steps, see :meth:`steps` and :func:`tracelens.steps.select_steps`)."""
        from dataclasses import replace

        from .errors import UsageError
        from .filters import EventFilter, parse_time_ns, select_nvtx

        unknown = set(filters) - set(Filters.__annotations__)
        if unknown:
            raise UsageError(
                f"unknown filter {sorted(unknown)[0]!r}; use: {', '.join(Filters.__annotations__)}"
            )
        where = where or EventFilter()
        ids = {k: filters[k] for k in ("device", "pid", "stream") if filters.get(k) is not None}
        for key in ("start", "end"):
            if filters.get(key) is not None:
                ids[f"{key}_ns"] = parse_time_ns(filters[key], param=key)
        where = replace(where, **ids) if ids else where
        if filters.get("nvtx") is not None:
            where, _ranges = select_nvtx(self, filters["nvtx"], where)
        if filters.get("step") is not None and filters.get("steps") is not None:
            raise UsageError("give step= or steps=, not both")
        spec = filters.get("step") if filters.get("step") is not None else filters.get("steps")
        if spec is not None:
            from .stepwork import select_steps

            where = select_steps(self, spec, where).where
        return where

    def census(
        self,
        *,
        name: str = "demangled",
        by_launch_config: bool = False,
        top: int | None = None,
        per_step: bool = False,
        where: EventFilter | None = None,
        **filters: Unpack[Filters],
    ) -> pl.DataFrame:
        """Top kernels by GPU time, as ``nsys stats --report cuda_gpu_kern_sum``.

        ``name``: demangled, short or mangled; ``by_launch_config``: also group by grid and
        block; ``top``: the first rows only. Columns (times in ns): time_pct (share of all
        kernel time that passes the filters), total_ns, instances, avg_ns, med_ns, min_ns,
        max_ns, stddev_ns, [grid_x, grid_y, grid_z, block_x, block_y, block_z,] name.
        ``per_step``: per_step_ns and calls_per_step instead of total_ns and instances, over
        the steady-state steps (or ``step``/``steps``; see
        :func:`tracelens.census.kernel_summary_per_step_rows`). Filters: see :meth:`filter`."""
        from .census import kernel_summary, kernel_summary_per_step_rows
        from .errors import UsageError

        if per_step:
            spec, other = filters.pop("step", None), filters.pop("steps", None)
            if spec is not None and other is not None:
                raise UsageError("give step= or steps=, not both")
            spec = other if spec is None else spec
            rows, _chosen = kernel_summary_per_step_rows(
                self, name=name, by_launch_config=by_launch_config, top=top,
                where=self.filter(where, **filters), steps=spec,
            )  # fmt: skip
            return rows.to_polars()
        where = self.filter(where, **filters)
        return kernel_summary(
            self, name=name, by_launch_config=by_launch_config, top=top, where=where
        )

    def memory_time(
        self, *, where: EventFilter | None = None, **filters: Unpack[Filters]
    ) -> pl.DataFrame:
        """GPU time per memory operation (``[CUDA memcpy HtoD]``, ..., ``[CUDA memset]``), as
        ``cuda_gpu_mem_time_sum``: time_pct, total_ns, count, avg_ns, med_ns, min_ns,
        max_ns, stddev_ns, operation. Filters: see :meth:`filter`."""
        from .memory import memory_summary

        return memory_summary(self, by="time", where=self.filter(where, **filters))

    def memory_size(
        self, *, where: EventFilter | None = None, **filters: Unpack[Filters]
    ) -> pl.DataFrame:
        """Bytes per memory operation, as ``cuda_gpu_mem_size_sum``: total_mb, count,
        avg_mb, med_mb, min_mb, max_mb, stddev_mb (MB = 10^6 bytes), total_bytes,
        operation. Filters: see :meth:`filter`."""
        from .memory import memory_summary

        return memory_summary(self, by="size", where=self.filter(where, **filters))

    def stakeout(
        self,
        kernel: str,
        *,
        match: str = "contains",
        name: str = "demangled",
        sort: str = "start",
        limit: int | None = None,
        ignore_case: bool = False,
        where: EventFilter | None = None,
        **filters: Unpack[Filters],
    ) -> Stakeout:
        """Every launch of the kernels whose demangled or short name matches ``kernel``
        (``match``: exact, contains or regex; ``ignore_case``): a :class:`Stakeout` with
        stats, configurations, histogram and one row per launch (start_ns from session
        start, duration_ns, queue_ns, grid, block, registers, API call, NVTX range).
        ``sort``: start or duration; ``limit``: launches kept (stats cover all). Filters:
        see :meth:`filter`."""
        from .stakeout import stakeout

        return stakeout(
            self, kernel, match=match, name=name, sort=sort, limit=limit,
            ignore_case=ignore_case, where=self.filter(where, **filters),
        )  # fmt: skip

    def timeline(
        self,
        *,
        api: bool = False,
        gap_ns: int = 100_000,
        name: str = "demangled",
        limit: int | None = None,
        offset: int = 0,
        where: EventFilter | None = None,
        **filters: Unpack[Filters],
    ) -> Timeline:
        """Kernels, memcpys, memsets and NVTX ranges (CUDA API calls with ``api``) in time
        order, with idle gaps longer than ``gap_ns`` per device: a :class:`Timeline` whose
        ``events`` has start_ns (from session start), duration_ns, kind, device, stream,
        pid, tid, correlation_id, bytes, throughput_gbps, name. ``limit``/``offset`` page.
        Filters: see :meth:`filter` (device and stream select GPU rows only)."""
        from .timeline import timeline

        return timeline(
            self, api=api, gap_ns=gap_ns, name=name, limit=limit, offset=offset,
            where=self.filter(where, **filters),
        )  # fmt: skip

    def lineup(
        self,
        *,
        by: str | None = None,
        rules: Any = None,
        subfamily: Any = None,
        name: str = "demangled",
        top: int | None = None,
        where: EventFilter | None = None,
        **filters: Unpack[Filters],
    ) -> pl.DataFrame:
        """GPU time by kernel category (memcpys and memsets in ``memory``), one row per
        category then its subfamily rows: [by,] category, subfamily, time_pct, total_ns,
        calls, avg_ns, top_kernel_ns, top_kernel. ``by``: device, stream or pid; ``rules``:
        extra category rules (TOML path or Rules); ``top``: largest categories. Filters: see
        :meth:`filter`."""
        from .lineup import category_summary

        return category_summary(
            self, by=by, rules=rules, subfamily=subfamily, name=name, top=top,
            where=self.filter(where, **filters),
        )  # fmt: skip

    def danger(
        self,
        *,
        rules: Any = None,
        top: int | None = None,
        where: EventFilter | None = None,
        **filters: Unpack[Filters],
    ) -> pl.DataFrame:
        """Kernels that are determinism or batch-invariance risks, one row per (kernel,
        rule): rule_id, level (high, medium, info), name, instances, total_ns, time_pct,
        why, fix, source. ``rules``: extra danger rules. Filters: see :meth:`filter`."""
        from .danger import danger_kernels

        return danger_kernels(self, rules=rules, top=top, where=self.filter(where, **filters))

    def decoded_kernels(
        self,
        *,
        top: int | None = None,
        where: EventFilter | None = None,
        **filters: Unpack[Filters],
    ) -> pl.DataFrame:
        """Every distinct kernel decoded, by GPU time: time_pct, total_ns, instances, family,
        category, subfamily, name, fields_summary, fields. Filters: see :meth:`filter`."""
        from .lineup import decoded_kernels

        return decoded_kernels(self, top=top, where=self.filter(where, **filters))

    # -- steps and time accounting (steps.py, util.py, findings.py) ------------------------
    def steps(
        self,
        range: str | None = None,  # noqa: A002 - the CLI's --range
        where: EventFilter | None = None,
        top_kernels: int = 0,
        **filters: Unpack[Filters],
    ) -> Steps:
        """The iterations of the program: the NVTX ranges labelled ``range`` (a glob) when
        given, else ProfilerStep markers, a repeated top-level NVTX range, or the period of
        the kernel launches (see :func:`tracelens.steps.find_steps`). ``Steps.frame``: one
        row per step and device (start_ns, end_ns, duration_ns, busy_ns, kernels, warmup,
        outlier, ...; ns from session start). With ``top_kernels``, ``.top_kernels`` lists
        that many kernels per step and device (see :func:`tracelens.stepwork.step_report`).
        Filters: see :meth:`filter`."""
        from .steps import find_steps

        where = self.filter(where, **filters)
        if top_kernels:
            from .stepwork import step_report

            return step_report(self, range=range, where=where, top_kernels=top_kernels)
        return find_steps(self, range=range, where=where)

    def findings(
        self,
        where: EventFilter | None = None,
        *,
        only: tuple[str, ...] = (),
        thresholds: dict[tuple[str, str], float] | None = None,
        limit: int | None = 50,  # findings.DEFAULT_LIMIT (tests/test_api.py checks)
        **filters: Unpack[Filters],
    ) -> Findings:
        """nsys analyze's rules and tracelens's (``only`` these rule ids when given);
        ``thresholds`` overrides a rule's default by (rule id, key); ``limit``: rows kept per
        rule (None or 0: all). ``Findings.frame``: one row per rule (rule, fired, rows,
        title, why, fix); each rule's rows in ``Findings.result(rule).frame``. Filters: see
        :meth:`filter` (``nvtx``, ``step``: the rules look at that work only). See
        :func:`tracelens.findings.find_issues`."""
        from .findings import find_issues

        return find_issues(
            self,
            only=only,
            thresholds=thresholds,
            limit=limit,
            where=self.filter(where, **filters),
        )

    def util(self, where: EventFilter | None = None, **filters: Unpack[Filters]) -> Util:
        """Per-device GPU time accounting: span, busy (compute, exposed communication, exposed
        copies) and idle split by cause, all in ns; ``Util.frame`` one row per device,
        ``idle_causes`` and ``communication`` per cause and collective kind. Filters: see
        :meth:`filter` (``step``: over those steps' GPU span and work). See
        :func:`tracelens.util.gpu_time_accounting`."""
        from .util import gpu_time_accounting

        return gpu_time_accounting(self, self.filter(where, **filters))

    # -- NVTX and CUDA API summaries (nvtx.py, api.py) ---------------------------------------
    def nvtx(
        self,
        style: str | None = None,
        gpu: bool = False,
        kernels: bool = False,
        group: str = "name",
        each: bool = False,
    ) -> pl.DataFrame:
        """NVTX ranges: CPU time per range name (nsys nvtx_sum; ``style`` 'pushpop' or
        'startend'), GPU time per range group (``gpu``; one row per range with ``each``) or
        kernels per range group (``kernels``); ``group`` 'name', 'path' or 'torch'.
        See :mod:`tracelens.nvtx`."""
        from .nvtx import nvtx_report

        return nvtx_report(
            self, style=style, gpu=gpu, each=each, kernels=kernels, group=group
        ).frame

    def nvtx_paths(self) -> pl.DataFrame:
        """Every GPU operation with the NVTX range path of its launch; see
        :func:`tracelens.nvtx.op_paths`."""
        from .nvtx import op_paths

        return op_paths(self)

    def api(
        self,
        exec: bool = False,  # noqa: A002 - the CLI's --exec
        *,
        name: str = "demangled",
        pid: int | None = None,
    ) -> pl.DataFrame:
        """CUDA API time per function (nsys cuda_api_sum), or with ``exec`` API, queue and
        kernel time per kernel (cuda_kern_exec_sum; kernels named by ``name``: demangled,
        short or mangled); ``pid``: one process only. Times in ns. See :mod:`tracelens.api`."""
        from .api import api_report

        return api_report(self, exec=exec, name=name, pid=pid).frame

    # -- numerical-path fingerprint (fingerprint/) ------------------------------------------

    # -- cache and inputs (cache.py, inputs.py) ---------------------------------------------

    # -- many ranks (ranks/) ------------------------------------------------------------------
    def session_start_utc_ns(self) -> int | None:
        """When the profiling session started, ns since the epoch (the base of every time in
        the export), without reading the events as ``info`` does; None when unrecorded."""
        if "TARGET_INFO_SESSION_START_TIME" not in self.tables:
            return None
        rows = self._sqlite_rows("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1")
        return rows[0][0] if rows else None

    def gpus(self) -> tuple[GpuInfo, ...]:
        """The GPUs the export describes (``info.gpus``, without reading the events)."""
        return self._info.gpus if self._info is not None else self._gpus()


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
