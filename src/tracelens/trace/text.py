"""The tables of text the DuckDB connection adds to the views: ``strings`` (StringIds)
and ``nvtx_text`` (NVTX events with their labels). Real exports can hold bytes that are not
UTF-8, which DuckDB's scanner rejects: then the table is read through Python's sqlite3,
such bytes as \\xNN escapes (``decode_text``)."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from .. import _resources, _schema
from .._sqlite import decode_text, strings_are_utf8
from ..errors import TraceError

if TYPE_CHECKING:
    import duckdb

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
                raise
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
