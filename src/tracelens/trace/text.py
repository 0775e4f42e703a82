"""The tables of text the DuckDB connection adds to the views: ``strings`` (StringIds)
and ``nvtx_text`` (NVTX events with their labels). Real exports can hold bytes that are not
UTF-8, which DuckDB's scanner rejects: then the table is read through Python's sqlite3,
such bytes as \\xNN escapes (``decode_text``)."""

from __future__ import annotations

import contextlib
import sqlite3
from typing import TYPE_CHECKING

from .. import _resources, _schema
from .._sqlite import decode_text, strings_are_utf8
from ..errors import TraceError

if TYPE_CHECKING:
    import duckdb

NVTX_TABLE = "NVTX_EVENTS"
# NVTX rows read through Python per batch (load_nvtx_text): bounded memory on 10M ranges.
NVTX_BATCH_ROWS = 250_000


class TextMethods:
    """The :class:`~tracelens.Trace` methods that load ``strings`` and ``nvtx_text``."""

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
                raise self._explain(exc) or exc from None
            # Real exports can hold bytes that are not UTF-8, which fail DuckDB's scan: read
            # them through Python's sqlite3 instead, where they become \xNN escapes.
            self._load_strings_slowly(con)

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

    def load_nvtx_spans(self) -> None:
        """Create the ``nvtx_spans`` table, once (``queries/_nvtx_spans.sql``): the ranges
        nsys projects onto the GPU, their thread and times only, no labels: what the NVTX
        sweep (``queries/_nvtx_tree.sql``) reads. From ``nvtx_text`` when that is loaded,
        else straight from the export or cache entry, six columns rather than every NVTX
        column and the text (on 10M ranges nvtx_text alone holds 1.3 GB)."""
        con = self.db
        if _table_exists(con, "nvtx_spans"):
            return
        con.execute(_resources.query("_nvtx_ranges"))
        if _table_exists(con, "nvtx_text"):
            source, export_sql = "SELECT * FROM nvtx_text", None
            last_sql = 'SELECT greatest(max(start), max("end")) FROM nvtx_text'
            last_ts = con.execute(last_sql).fetchone()[0]
        else:
            names = ["row_id", "start", "end", "eventType", "globalTid", "endGlobalTid"]
            source, export_sql = self._nvtx_select(names)
            last_ts = self._nvtx_last_ts(con)
        create = "CREATE TEMP TABLE nvtx_spans AS WITH nvtx_span_source AS ({}) {}"
        sql = create.format(source, _resources.query("_nvtx_spans"))
        with self._nvtx_attached(con, export_sql is not None):
            con.execute(sql, {"last_ts": last_ts})

    def _nvtx_last_ts(self, con) -> int | None:
        """The latest NVTX timestamp (start or end of any event): where a range left open
        at the end of the capture ends, as nvtx_ranges() says."""
        if self.parquet_dir is not None and self._parquet_tables.get(NVTX_TABLE):
            select, _export_sql = self._nvtx_select(["start", "end"])
            sql = f'SELECT greatest(max(start), max("end")) FROM ({select})'
            return con.execute(sql).fetchone()[0]
        if NVTX_TABLE not in self.tables:
            return None
        # SQLite's own aggregate: no second scan through DuckDB's scanner
        sql = 'SELECT max(start), max("end") FROM NVTX_EVENTS'
        starts, ends = self._sqlite_rows(sql)[0]
        return max(t for t in (starts, ends) if t is not None) if starts is not None else None

    def load_nvtx_held_text(self) -> None:
        """Create ``nvtx_held_text``: the ``nvtx_text`` rows of the ranges in ``nvtx_held``
        (those that hold GPU work, and their ancestors) and the domain names, for
        ``nvtx_ranges(source := 'nvtx_held_text')`` to name those ranges without loading
        every range's text. Filtered from ``nvtx_text`` when that is loaded."""
        con = self.db
        where = "row_id IN (SELECT range_id FROM nvtx_held) OR eventType = 75"
        con.execute("DROP TABLE IF EXISTS nvtx_held_text")
        if _table_exists(con, "nvtx_text"):
            con.execute(
                f"CREATE TEMP TABLE nvtx_held_text AS SELECT * FROM nvtx_text WHERE {where}"
            )
            return
        self._load_nvtx_text_into(con, with_ranges=False, table="nvtx_held_text", where=where)

    def _nvtx_select(self, names: list[str]) -> tuple[str, str | None]:
        """A SELECT of NVTX_EVENTS' ``names`` (``text`` VARCHAR, the others BIGINT; NULL
        where absent): from the cache entry or parquetdir, else from the export through
        the database :meth:`_nvtx_attached` attaches (no rows when the export has no NVTX
        table); and for the export, the same rows as SQLite's own SELECT (None
        otherwise), to be read through Python's sqlite3."""

        def cast(name: str, value: str) -> str:
            sqltype = "VARCHAR" if name == "text" else "BIGINT"
            return f"CAST({value} AS {sqltype}) AS {_schema._quote(name)}"

        if self._lazy is not None:  # the NVTX events are cached on first use, text and all
            self._lazy.ensure_nvtx()
        present = set(self._parquet_tables.get(NVTX_TABLE, ())) if self.parquet_dir else set()
        if present:
            # Parquet holds text as UTF-8 already (the cache wrote it decoded); row_id is
            # there when the cache wrote it. A directory nsys exported has no rowid: its
            # rows are numbered from 1 in file order, as SQLite numbers the rows it holds
            # (without ids every range would be one NULL id, and none would hold GPU work).
            numbered = "row_id" not in present

            def value(n: str) -> str:
                if n in present:
                    return _schema._quote(n)
                return "file_row_number + 1" if n == "row_id" else "NULL"

            select = ", ".join(cast(n, value(n)) for n in names)
            source = _schema.source_sql(NVTX_TABLE, "parquet", row_numbers=numbered)
            return f"SELECT {select} FROM {source}", None
        if NVTX_TABLE not in self.tables:
            return "SELECT " + ", ".join(cast(n, "NULL") for n in names) + " WHERE false", None
        in_sqlite = set(self.tables[NVTX_TABLE]) | {"row_id"}
        inner = ", ".join(
            "rowid AS row_id" if n == "row_id" else _schema._quote(n) if n in in_sqlite
            else f"NULL AS {_schema._quote(n)}"
            for n in names
        )  # fmt: skip
        # DuckDB's scan of the attached table gives SQLite's rowid as the column rowid;
        # sqlite_query(), which ran ``sql`` itself, converted each value 2.7x as slowly (the
        # 10M-range fixture's six span columns: 13.4 CPU s, 5.6 this way). ``sql`` is kept
        # for the reading through Python's sqlite3 when a label is not UTF-8.
        outer = ", ".join(
            cast(n, "rowid" if n == "row_id" else _schema._quote(n) if n in in_sqlite else "NULL")
            for n in names
        )
        sql = f"SELECT {inner} FROM {_schema._quote(NVTX_TABLE)}"
        return f"SELECT {outer} FROM nvtx_source.{_schema._quote(NVTX_TABLE)}", sql

    @contextlib.contextmanager
    def _nvtx_attached(self, con, needed: bool = True):
        """The export attached read-only as ``nvtx_source`` while a query made by
        :meth:`_nvtx_select` runs (SQLite's rowid, nsys's RangeId, is only reachable through
        an attached database: sqlite_scan does not expose it)."""
        if not needed:
            yield
            return
        # ATTACH takes no bound parameter; the path is the trace's own, quoted. READ_ONLY:
        # SQLite opens the file read-only and writes nothing beside it.
        path = str(self._real_path).replace("'", "''")
        con.execute(f"ATTACH '{path}' AS nvtx_source (TYPE sqlite, READ_ONLY)")
        try:
            yield
        finally:
            con.execute("DETACH nvtx_source")

    def _load_nvtx_text_into(
        self, con, with_ranges: bool = True, *, table: str = "nvtx_text", where: str = "true"
    ) -> None:
        """``table`` (nvtx_text) from the cache entry or export, its rows those ``where``
        holds; then the nvtx_ranges() macro (``with_ranges``)."""
        import duckdb

        if _table_exists(con, table):
            return
        _table, columns = _schema.VIEWS["nvtx_events"]
        # row_id is the NVTX_EVENTS rowid: nsys stats calls it RangeId.
        names = ["row_id"] + [name for name, _type in columns] + ["text"]
        select, export_sql = self._nvtx_select(names)
        create = f"CREATE TEMP TABLE {table} AS SELECT * FROM ({select}) WHERE {where}"
        try:
            with self._nvtx_attached(con, export_sql is not None):
                con.execute(create)
        except duckdb.Error as exc:
            if "utf" not in str(exc).lower() and "unicode" not in str(exc).lower():
                # a damaged page ('database disk image is malformed'): the file's one line
                raise self._explain(exc) or exc from None
            # Bytes that are not UTF-8 in a label: read through Python instead.
            con.execute(f"DROP TABLE IF EXISTS {table}")
            typed = ", ".join(f"{_schema._quote(n)} BIGINT" for n in names[:-1])
            con.execute(f"CREATE TEMP TABLE {table} ({typed}, text VARCHAR)")
            self._load_nvtx_text_slowly(con, names, export_sql, table, where)
        if with_ranges:
            con.execute(_resources.query("_nvtx_ranges"))
            con.execute(_resources.query("_step_ranges"))  # steps' rule, over thread_ranges
            # what an --nvtx pattern matches, over nvtx_ranges()
            con.execute(_resources.query("_nvtx_matched_ranges"))

    def _load_nvtx_text_slowly(
        self, con, names: list[str], sql: str, table: str, where: str
    ) -> None:
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
            con.execute(f"INSERT INTO {table} SELECT * FROM _nvtx_text WHERE {where}")
            con.unregister("_nvtx_text")


def _table_exists(con, name: str) -> bool:
    sql = "SELECT count(*) FROM duckdb_tables() WHERE table_name = $name"
    return bool(con.execute(sql, {"name": name}).fetchone()[0])
