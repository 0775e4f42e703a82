"""The DuckDB connection of a trace: the normalized views (``_schema.VIEWS``) over the
export, or over the Parquet files of a parquetdir input or of a cache entry (filled as
statements need it: :mod:`tracelens.trace.lazy`), with the SQL helpers every query uses
installed."""

from __future__ import annotations

from pathlib import Path

from .. import _resources, _schema


class ViewMethods:
    """The :class:`~tracelens.Trace` methods that open and fill its DuckDB connection."""

    def _open_duckdb(self):
        import duckdb

        from .. import _engine

        con = _engine.connect()
        try:
            self._install_views(con)
        except duckdb.Error as exc:
            con.close()
            raise self._explain(exc) or exc from None
        if self._lazy is None:
            return con
        from .lazy import CachingConnection

        return CachingConnection(con, self._lazy)

    def _install_views(self, con) -> None:
        con.execute(_resources.query("_memcpy_labels"))
        if self.parquet_dir is not None:
            self._install_parquet(con, self.parquet_dir, self.tables)
        else:
            con.execute("SET VARIABLE trace_path = $path", {"path": str(self._real_path)})
            for view, (table, _cols) in _schema.VIEWS.items():
                con.execute(_schema.view_sql(view, self.tables.get(table)))
            self._lazy = self._lazy_cache()
            if self._lazy is not None and "StringIds" in self._lazy.columns:
                self._load_parquet_strings(con, self._lazy.entry)
            else:
                self._load_strings(con)
            if self._lazy is not None:
                self._lazy.install(con)
        con.execute(_resources.query("_shared"))
        con.execute(_resources.query("_issued_transfers"))

    def _install_parquet(
        self, con, directory: Path, tables: dict[str, tuple[str, ...]], guard: bool = True
    ) -> None:
        """Point the views (and ``strings``) at ``directory``'s ``<table>.parquet`` files."""
        con.execute("SET VARIABLE parquet_dir = $d", {"d": str(directory)})
        for view, (table, _cols) in _schema.VIEWS.items():
            con.execute(_schema.view_sql(view, tables.get(table), "parquet", guard))
        if "StringIds" in tables:
            self._load_parquet_strings(con, directory)
        else:
            con.execute("CREATE TEMP TABLE strings (id BIGINT, value VARCHAR)")
        self._parquet_tables = tables

    def _load_parquet_strings(self, con, directory: Path) -> None:
        con.execute("SET VARIABLE parquet_dir = $d", {"d": str(directory)})
        con.execute(
            "CREATE TEMP TABLE strings AS SELECT CAST(id AS BIGINT) AS id, "
            f"CAST(value AS VARCHAR) AS value FROM {_schema.source_sql('StringIds', 'parquet')}"
        )

    def _lazy_cache(self):
        """The columnar cache of this trace, filled as statements need it (see
        :mod:`tracelens.trace.lazy`), or None to read the export directly: caching is off
        or the trace is small."""
        from .. import cache
        from .lazy import LazyCache

        settings = self._cache_settings()
        if not settings.enabled or self._source_file.stat().st_size < settings.min_bytes:
            return None
        ident = cache.identity(self._source_file)
        return LazyCache(self, settings, ident, cache.lookup(settings.root, ident))
