"""The DuckDB connection of a trace: the normalized views (``_schema.VIEWS``) over the
export, or over the Parquet files of a parquetdir input or of a cache entry, with the SQL
helpers every query uses installed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .. import _resources, _schema

if TYPE_CHECKING:
    import duckdb


class ViewMethods:
    """The :class:`~tracelens.Trace` methods that open and fill its DuckDB connection."""

    def _open_duckdb(self) -> duckdb.DuckDBPyConnection:
        import duckdb

        from .. import _engine

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
                from .. import inputs

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

    def _cache_entry(self, con) -> Path | None:
        """The cache entry to read (built now if needed), or None to read the export
        directly: caching is off, the trace is small, or the cache cannot be written (then
        a notice says so)."""
        import duckdb

        from .. import cache

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
        from ..cache import Table

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
