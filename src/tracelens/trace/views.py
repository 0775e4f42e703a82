"""The DuckDB connection of a trace: the normalized views (``_schema.VIEWS``) over the
export, or over the Parquet files of a parquetdir input or of a cache entry (filled as
statements need it: :mod:`tracelens.trace.lazy`), with the SQL helpers every query uses
installed."""

from __future__ import annotations

import contextlib
from pathlib import Path

from .. import _resources, _schema


class ViewMethods:
    """The :class:`~tracelens.Trace` methods that open and fill its DuckDB connection."""

    def _open_duckdb(self):
        import duckdb

        from .. import _engine

        # The sqlite extension is loaded when the export is read (_read_export), not here:
        # a parquetdir input never needs it, a cached trace only for what its cache lacks.
        con = _engine.connect(sqlite=False)
        try:
            self._install_views(con)
        except duckdb.Error as exc:
            con.close()
            raise self._explain(exc) or exc from None
        if self._lazy is None:
            return con
        from .lazy import CachingConnection

        return CachingConnection(con, self._lazy)

    def _read_export(self, con) -> None:
        """Make the export readable on ``con`` (DuckDB's sqlite extension), once."""
        if not self._export_loaded:
            from .. import _engine

            _engine.load_sqlite(con)
            self._export_loaded = True

    def _install_views(self, con) -> None:
        con.execute(_resources.query("_memcpy_labels"))
        if self.parquet_dir is not None:
            self._install_parquet(con, self.parquet_dir, self.tables)
        else:
            con.execute("SET VARIABLE trace_path = $path", {"path": str(self._real_path)})
            self._lazy = self._lazy_cache()
            # a cached trace's views are its LazyCache's (install below); the rest read the
            # export, or are empty when the export lacks their table
            lazy = self._lazy.wanted if self._lazy is not None else {}
            for view, (table, _cols) in _schema.VIEWS.items():
                if table not in lazy:
                    if table in self.tables:
                        self._read_export(con)
                    con.execute(_schema.view_sql(view, self.tables.get(table)))
            if self._lazy is not None and "StringIds" in self._lazy.columns:
                self._load_parquet_strings(con, self._lazy.entry)
            else:
                self._read_export(con)
                self._load_strings(con)
            if self._lazy is not None:
                self._lazy.install(con)
        con.execute(_resources.query("_shared"))
        con.execute(_resources.query("_bound_lists"))
        con.execute(_resources.query("_issued_transfers"))
        con.execute(_resources.query("_lineup"))
        con.execute(_resources.query("_step_marks"))
        con.execute(_resources.query("_step_top_kernels"))
        con.execute(_resources.query("_step_range_calls"))

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

    def _kernels_named(self, name_ids: list[int]):
        """Within the block the ``kernels`` view holds only the launches under these
        StringIds ids (demangled or short name), when the export is read directly (see
        :meth:`_kernels_where`): stakeout of 92k of 5M launches, its 17 columns, 0.9 CPU s
        instead of 2.9."""
        ids = ", ".join(str(int(i)) for i in name_ids) or "NULL"  # our own integers
        return self._kernels_where(f'"demangledName" IN ({ids}) OR "shortName" IN ({ids})')

    @contextlib.contextmanager
    def _kernels_where(self, condition: str):
        """Within the block the ``kernels`` view holds only the kernel rows for which the
        SQLite expression ``condition`` (built by tracelens from its own integers) holds,
        when the export is read directly: SQLite filters its own rows (on every core, see
        :mod:`tracelens.trace.parts`), and DuckDB's scanner, which converts every column of
        every row, reads only those. The same scan counts the kernels that end before they
        start (:meth:`damaged_work`). Elsewhere (a cache entry, a parquetdir: DuckDB's own
        filters skip Parquet row groups), and when a row it keeps holds what nsys never
        writes (the whole view then says what is wrong), the view stays whole; the caller's
        query must keep the same rows either way."""
        table = "CUPTI_ACTIVITY_KIND_KERNEL"
        con = self.db
        direct = self._sqlite is not None and self.parquet_dir is None
        if (
            not direct
            or table not in self.tables
            or (self._lazy is not None and not self._lazy.off)
        ):
            yield
            return
        present = self.tables[table]
        if not self._fill_kernels_named(table, present, condition):
            # the whole view reads those values and says what is wrong
            con.execute("DROP TABLE IF EXISTS kernels_named")
            yield
            return
        con.execute("CREATE OR REPLACE VIEW kernels AS SELECT * FROM kernels_named")
        try:
            yield
        finally:
            con.execute(_schema.view_sql("kernels", present))
            con.execute("DROP TABLE kernels_named")

    def _fill_kernels_named(self, table: str, present: tuple[str, ...], condition: str) -> bool:
        """The temp table kernels_named: the rows of the kernel table ``table`` (columns
        ``present``) for which ``condition`` holds, as the ``kernels`` view gives them, read
        by SQLite in parts (:func:`.parts.sqlite_query_parts`); the damaged kernels counted
        on the way. False when a row holds what nsys never writes (a value that is not an
        integer, a time beyond the limits): the caller keeps the whole view."""
        import duckdb

        from .parts import sqlite_query_parts

        con = self.db
        columns = ", ".join(_schema._quote(c) for c in present)
        # sqlite_query gives every column as text: whether SQLite holds an integer (or NULL)
        # there, as nsys writes, is asked of SQLite itself
        typed = " AND ".join(f"typeof({_schema._quote(c)}) IN ('integer', 'null')" for c in present)
        # the damaged kernels (queries/_shared.sql's ends_before_start, in SQLite's words)
        # come along, counted and then left out, unless they are counted already
        count_damaged = "kernel" not in self._damaged and {"start", "end"} <= set(present)
        ends_before = '"end" < start' if count_damaged else "0"
        marks = (
            f"{typed} AS tracelens_typed, ({condition}) AS tracelens_wanted, "
            f"{ends_before} AS tracelens_ends_before, rowid AS tracelens_rowid"
        )

        def part_sql(low: int, high: int) -> str:
            return (
                f"SELECT {columns}, {marks} FROM {_schema._quote(table)} "
                f"WHERE rowid BETWEEN {int(low)} AND {int(high)} AND (({condition}) OR {ends_before})"
            )

        try:
            # the parts' rows stand as export_rows (_schema.source_sql's "rows") while the
            # view's table is made of them, in the table's order
            with sqlite_query_parts(self, table, part_sql, "export_rows"):
                untyped, damaged_kernels = con.execute(
                    "SELECT count(*) FILTER (tracelens_typed <> '1'), "
                    "count(*) FILTER (tracelens_ends_before = '1') FROM export_rows"
                ).fetchone()
                if untyped:
                    return False
                select = _schema.view_select("kernels", present, "rows", guard=False)
                con.execute(
                    f"CREATE OR REPLACE TEMP TABLE kernels_named AS {select} "
                    "WHERE tracelens_wanted = '1' ORDER BY CAST(tracelens_rowid AS BIGINT)"
                )
        except duckdb.Error:  # bytes it cannot give as text (a blob where nsys writes ints)
            return False
        if count_damaged:
            self._damaged["kernel"] = int(damaged_kernels)
        limit = _schema.TIME_LIMIT_NS
        beyond = con.execute(
            'SELECT count(*) FROM kernels_named WHERE start IS NULL OR "end" IS NULL OR '
            f'NOT (start BETWEEN -{limit} AND {limit} AND "end" BETWEEN -{limit} AND {limit})'
        ).fetchone()[0]
        return not beyond
