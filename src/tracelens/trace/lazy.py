"""The columnar cache filled as commands need it: each statement on a big trace's connection
first caches the tables and columns it reads that the cache entry lacks, then reads them
from Parquet.

Why not everything at once: copying every column of the views (kernels with 23 columns,
runtime calls, NVTX text) cost census 7.8 CPU s on the 5M-kernel trace, 6.9x a bare scan of
the three columns census reads, and most of it was never read by the command that paid for
it. What a statement reads is what DuckDB's plan says: ``EXPLAIN`` of the statement with the
views of the tables not wholly cached pointed at *probes* (a temporary table per view, three
rows: each column's least and greatest value and NULL, so that no filter can be proven empty
and no scan dropped) names each probe's scan with the columns it projects and filters on. A
table's first copy holds just those columns (and start/end: every later query of that table
counts or times rows); a later statement that needs more rewrites it with all of the view's
columns, so a table is copied at most twice. Until a table holds every column, each statement
pays for one ``EXPLAIN`` (milliseconds); a complete table is read from Parquet with no check.
Planning over probes rather than over the export's own views means a run whose statements
the entry already answers never loads DuckDB's sqlite extension (0.13 CPU s of the 5M-kernel
trace's cached census, 0.55 s, was that load).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _schema, cache

if TYPE_CHECKING:
    from collections.abc import Callable

    import duckdb

NVTX_TABLE = "NVTX_EVENTS"
PROBE_PREFIX = "tracelens_probe_"
BIGINT_RANGE = (-(2**63), 2**63 - 1)
STRINGS_TABLE = "StringIds"
# Statements that read no view: no plan to ask for (EXPLAIN of some of them fails anyway).
_NO_READS = (
    "SET ",
    "RESET ",
    "DROP ",
    "ATTACH ",
    "DETACH ",
    "LOAD ",
    "PRAGMA ",
    "CREATE OR REPLACE TEMP MACRO",
)


class CachingConnection:
    """A trace's DuckDB connection: every ``execute`` first lets :class:`LazyCache` cache
    what the statement reads; everything else is the connection's own."""

    def __init__(self, con: duckdb.DuckDBPyConnection, lazy: LazyCache) -> None:
        self._con = con
        self._lazy = lazy

    def execute(self, query: str, parameters: Any = None):
        return self._prepared(query, parameters, lambda: self._con.execute(query, parameters))

    def arrow_table(self, query: str):
        """``execute``'s twin for a read (no parameters) collected straight into Arrow
        (DuckDB's relation API, which plans the statement when it is fetched: it is
        prepared here first, as ``execute`` prepares its statements)."""
        return self._prepared(query, None, lambda: self._con.sql(query).to_arrow_table())

    def _prepared(self, query: str, parameters: Any, run: Callable[[], Any]):
        """``run()`` once :class:`LazyCache` has cached what ``query`` reads; run again on
        the export when the entry was lost meanwhile (as without a cache)."""
        import duckdb

        self._lazy.prepare(self._con, query, parameters)
        try:
            return run()
        except duckdb.IOException as exc:
            if not self._lazy.lost(exc):
                raise
        return run()

    def __getattr__(self, name: str):
        return getattr(self._con, name)


class LazyCache:
    """The cache entry of one trace as its connection fills it; ``entry`` is None until the
    first table is written. Views of tables the entry holds completely read Parquet; the
    others read the export, except during a statement whose columns the entry holds."""

    def __init__(self, trace, settings: cache.Settings, ident: dict, entry: Path | None):
        self.trace = trace
        self.settings = settings
        self.ident = ident
        self.entry = entry
        # held while this trace reads the entry: no other run's eviction removes it
        self._lease = cache.hold(entry) if entry else None
        if entry is not None and self._lease is None and not (entry / cache.MANIFEST).is_file():
            self.entry = entry = None  # evicted since the lookup: built again as needed
        self.columns = cache.cached_columns(entry) if entry else {}
        # nsys table -> the view columns the export has (what "complete" means)
        self.wanted = {
            table: tuple(c for c, _t in cols if c in trace.tables[table])
            for table, (_view, cols) in _schema.VIEWS_BY_TABLE.items()
            if table in trace.tables
        }
        self.off = False  # the cache could not be written: read the export from now on
        self._shown: dict[str, str] = {}  # table -> "sqlite", "parquet" or "probe": its view
        self._probes: set[str] = set()  # tables whose probe exists
        self._busy = False
        self.con: duckdb.DuckDBPyConnection | None = None  # set by install

    # -- views -----------------------------------------------------------------------------
    def install(self, con) -> None:
        """Point the views of completely cached tables at the entry and the others at their
        probes (a statement that reads them is planned before it runs: :meth:`prepare`)."""
        self.con = con
        if self.entry is not None:
            self._use_entry(con)
        for table in self.wanted:
            self._show(con, table, "parquet" if self._complete(table) else "probe")

    def table_rows(self, table: str) -> int | None:
        """The rows of ``table`` (its nsys name) when the entry holds a copy of it: every row
        of the table, whatever columns it holds (each view is its table unfiltered), read
        from the Parquet footer (5M kernels: ~0.001 s, where SQLite counts them in ~0.08 CPU
        s); None when the export must count them (no entry, the cache off, the table not
        cached, its file gone)."""
        import duckdb

        if self.off or self.entry is None or self.con is None or table not in self.columns:
            return None
        path = str(self.entry / f"{table}.parquet")
        try:
            return self.con.execute(
                "SELECT count(*) FROM read_parquet($f)", {"f": path}
            ).fetchone()[0]
        except duckdb.Error:  # removed meanwhile: the export counts them
            return None

    def _complete(self, table: str, needed=None) -> bool:
        needed = self.wanted[table] if needed is None else needed
        return table in self.columns and set(needed) <= set(self.columns[table])

    def _show(self, con, table: str, source: str) -> None:
        if self._shown.get(table) == source:
            return
        view, columns = _schema.VIEWS_BY_TABLE[table]
        if source == "parquet":
            con.execute(_schema.view_sql(view, self.columns[table], "parquet", guard=False))
        elif source == "probe":
            probe = _schema._quote(PROBE_PREFIX + view)
            if table not in self._probes:
                typed = ", ".join(f"{_schema._quote(c)} {t}" for c, t in columns)
                low, high = (", ".join([str(v)] * len(columns)) for v in BIGINT_RANGE)
                nulls = ", ".join(["NULL"] * len(columns))
                con.execute(f"CREATE OR REPLACE TEMP TABLE {probe} ({typed})")
                con.execute(f"INSERT INTO {probe} VALUES ({low}), ({high}), ({nulls})")
                self._probes.add(table)
            con.execute(f"CREATE OR REPLACE VIEW {_schema._quote(view)} AS SELECT * FROM {probe}")
        else:
            self.trace._read_export(con)
            con.execute(_schema.view_sql(view, self.trace.tables.get(table)))
        self._shown[table] = source

    def _use_entry(self, con) -> None:
        con.execute("SET VARIABLE parquet_dir = $d", {"d": str(self.entry)})
        self.trace.parquet_dir = self.entry
        self.trace._parquet_tables = self.columns

    # -- before each statement ---------------------------------------------------------------
    def prepare(self, con, query: str, parameters: Any) -> None:
        """Cache what ``query`` reads that the entry lacks; point those views at it."""
        if self.off or self._busy or query.lstrip()[:30].upper().startswith(_NO_READS):
            return
        partial = [t for t in self.wanted if not self._complete(t)]
        if not partial:
            return
        import duckdb

        for table in partial:
            self._show(con, table, "probe")
        try:
            plan = con.execute("EXPLAIN (FORMAT json) " + query, parameters).fetchall()
        except duckdb.Error:
            # not one plannable statement: it reads the export, as without a cache
            for table in partial:
                self._show(con, table, "sqlite")
            return
        read = probed_columns(plan)
        needs = {t: read[t] & set(self.wanted[t]) for t in partial if t in read}
        missing = {t: c for t, c in needs.items() if not self._complete(t, c)}
        if missing and not self._write(con, missing):
            return
        for table, cols in needs.items():
            if self._complete(table, cols):
                self._show(con, table, "parquet")

    def ensure_nvtx(self) -> None:
        """Cache the NVTX events with their text (for the NVTX queries that read them
        without the view), unless the entry has them or the cache is off."""
        if self.off or self._busy or NVTX_TABLE not in self.wanted:
            return
        if not self._complete(NVTX_TABLE):
            self._write(self.con, {NVTX_TABLE: set(self.wanted[NVTX_TABLE])})

    # -- writing -----------------------------------------------------------------------------
    def _write(self, con, missing: dict[str, set[str]]) -> bool:
        """Add ``missing`` to the entry (created if needed); False when the cache directory
        cannot be written (a notice says so and the export is read from then on)."""
        import duckdb

        self.trace._read_export(con)
        self._busy = True
        try:
            with cache.writing(self.settings, self.ident, self.trace._source_file) as entry:
                if self._lease is None:  # before writing() evicts past the cap
                    self._lease = cache.hold(entry)
                self.columns = cache.cached_columns(entry)  # another run may have added some
                tables = self._tables(con, missing)
                if tables:
                    self._announce(entry, tables)
                total = sum(t.weight for t in tables) or 1.0
                done = 0.0
                for table in tables:
                    if table.file == f"{NVTX_TABLE}.parquet":
                        self.trace._load_nvtx_text_into(
                            con, with_ranges=False, table="_nvtx_cache_rows"
                        )
                    before, done = done, done + table.weight
                    cache.add(con, entry, table, self.trace._progress, (before, done / total))
                self.columns = cache.cached_columns(entry)
        except (OSError, duckdb.IOException) as exc:
            self._give_up(exc)
            return False
        finally:
            self._busy = False
            con.execute("DROP TABLE IF EXISTS _nvtx_cache_rows")
        self.entry = entry
        self._use_entry(con)
        self._repoint(con)
        return True

    def _repoint(self, con) -> None:
        """After the manifest was read again (it may list what other runs cached): every
        completely cached table's view reads its Parquet, whoever wrote it. :meth:`prepare`
        plans only the tables not wholly cached, so a view left on its probe here would be
        read as the table from then on (three rows of extreme values, exit 0)."""
        for table in self.wanted:
            if self._complete(table):
                self._shown.pop(table, None)  # its file may have grown: view it again
                self._show(con, table, "parquet")
            elif self._shown.get(table) == "parquet":  # the next prepare views it again
                self._shown[table] = "stale"

    def _announce(self, entry: Path, tables: list[cache.Table]) -> None:
        progress = self.trace._progress
        if not progress:
            return
        from .. import inputs

        name = self.trace._source_file.name  # export.sqlite in the cache for a report: say whose
        if inputs.is_report(self.trace.path):
            name = f"{self.trace.path.name}'s SQLite export"
        if not self.columns:
            size = self.ident["size"] / 1e6
            message = (
                f"caching {name} ({size:,.1f} MB) as Parquet in {entry} (once; later runs read it)"
            )
        else:
            views = [_schema.VIEWS_BY_TABLE.get(t.file.removesuffix(".parquet")) for t in tables]
            named = ", ".join(sorted(v[0] for v in views if v))
            message = f"adding {named} of {name} to its cache in {entry} (once)"
        progress(message, 0.0)

    def _tables(self, con, missing: dict[str, set[str]]) -> list[cache.Table]:
        """What to write: the strings once, and per missing table the columns a first copy
        needs, or all of the view's when a narrower copy exists."""
        tables = []
        for table, needed in missing.items():
            have = set(self.columns.get(table, ()))
            if self._complete(table, needed):
                continue  # another run cached it while this one waited for the lock
            if table == NVTX_TABLE:
                # every NVTX column, the rowid (row_id) and the decoded text, as nvtx_text
                cols = ("row_id", *(c for c, _t in _schema.VIEWS["nvtx_events"][1]), "text")
                select = "SELECT * FROM _nvtx_cache_rows"
            else:
                wanted = self.wanted[table]
                first = set(needed) | set(_schema.GUARDED_COLUMNS)
                cols = tuple(c for c in wanted if c in first) if not have else wanted
                quoted = ", ".join(_schema._quote(c) for c in cols)
                select = f"SELECT {quoted} FROM {_schema._quote(_schema.VIEWS_BY_TABLE[table][0])}"
                self._show(con, table, "sqlite")
            weight = self._rows(table) * len(cols) + 1
            tables.append(cache.Table(f"{table}.parquet", select, cols, weight))
        if tables and STRINGS_TABLE not in self.columns:
            # last: a damaged table met first leaves nothing cached (and no entry)
            tables.append(
                cache.Table("StringIds.parquet", "SELECT * FROM strings", ("id", "value"))
            )
        return tables

    def _rows(self, table: str) -> float:
        # the largest rowid: a b-tree lookup, no scan
        rows = self.trace._sqlite_rows(f"SELECT max(rowid) FROM {_schema._quote(table)}")
        return float(rows[0][0] or 0)

    def release(self) -> None:
        """Let eviction remove the entry (the trace is closed)."""
        if self._lease is not None:
            self._lease.close()
            self._lease = None

    def lost(self, exc: Exception) -> bool:
        """After a statement failed reading files: when the entry's files are gone (removed
        by ``cache clear`` or by hand; eviction passes over an entry this run holds), read
        the export from now on, with one notice, and True (the caller runs the statement
        again); else False."""
        entry = self.entry
        if self.off or entry is None or str(entry) not in str(exc):
            return False
        if (entry / cache.MANIFEST).is_file() and all(
            (entry / f"{table}.parquet").is_file() for table in self.columns
        ):
            return False
        self.off = True
        self.release()
        self.columns, self.entry = {}, None
        self.trace.parquet_dir, self.trace._parquet_tables = None, {}
        self._shown.clear()
        for table in self.wanted:
            self._show(self.con, table, "sqlite")
        self._notify(
            f"the cache entry of {self.trace.path.name} in {self.settings.root} was removed "
            "while it was read; reading the trace directly"
        )
        return True

    def _notify(self, notice: str) -> None:
        self.trace.notices.append(notice)
        if self.trace._progress:
            self.trace._progress(notice, None)

    def _give_up(self, exc: Exception) -> None:
        self.off = True
        # every statement from now on reads as it is: the export, but for the views that
        # already read a whole cached table (a table that other runs completed, as the
        # manifest read before the failure says, may still be viewed as its probe)
        for table in self.wanted:
            if self._shown.get(table) != "parquet" or not self._complete(table):
                self._show(self.con, table, "sqlite")
        reason = getattr(exc, "strerror", None) or str(exc).strip().splitlines()[0]
        self._notify(
            f"cannot cache {self.trace.path.name} in {self.settings.root} ({reason}); "
            "reading the trace directly"
        )


def probed_columns(plan: list[tuple]) -> dict[str, set[str]]:
    """nsys table -> the names its probe's scans project or filter on, from the rows of an
    ``EXPLAIN (FORMAT json)`` (every word of those texts that could be a column: a word too
    many only copies a column early)."""
    probes = {PROBE_PREFIX + view: table for table, (view, _c) in _schema.VIEWS_BY_TABLE.items()}
    found: dict[str, set[str]] = {}

    def walk(node: dict) -> None:
        info = node.get("extra_info") or {}
        name = str(info.get("Table", "")).rsplit(".", 1)[-1].strip('"')
        if name in probes:
            table = probes[name]
            if "Projections" in info:
                text = json.dumps([info["Projections"], info.get("Filters")])
                words = set(re.findall(r"\w+", text))
            else:  # a scan that does not say: every column
                words = {c for c, _t in _schema.VIEWS_BY_TABLE[table][1]}
            found.setdefault(table, set()).update(words)
        for child in node.get("children", ()):
            walk(child)

    for _kind, text in plan:
        for node in json.loads(text):
            walk(node)
    return found
