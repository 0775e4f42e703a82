"""The columnar cache: the tables tracelens reads, as Parquet, in the user's cache directory.

Every command on a big SQLite export otherwise re-reads it through DuckDB's sqlite scanner,
whose cost grows with every column read (9 kernel columns of 5M rows: 0.9 s; the same from
Parquet: ~0.1 s). So a trace above ``min_bytes`` is copied into Parquet as statements read
it (:mod:`tracelens.trace.lazy` decides what: each table's columns a statement reads, then
all of them), one file per nsys table (the layout ``nsys export --type parquetdir`` writes,
so one reader serves both), and later statements and runs read those. An entry can also
hold derived files, which tracelens computed from those tables and lists with the version of
what made them (:func:`add_derived`; util's sorted GPU work, :mod:`tracelens.util_workfile`).

Parquet rather than a DuckDB database file (measured on the 5M-kernel trace, both built
from the same views): the DuckDB file answered census ~25% faster and a 10 ms window ~2x
faster (zone maps), but Parquet is half the size (kernels + runtime: 93 vs 171 MB), needs no
lock to read (two runs on one trace read the same files while a third builds), is the
format nsys itself exports (so the cache and a ``parquetdir`` export share the loader), and
can be opened by polars or pandas for a user's own analysis.

Where: ``$TRACELENS_CACHE_DIR``, else ``$XDG_CACHE_HOME/tracelens``, else
``~/.cache/tracelens``; never beside the trace. An entry is a directory
``traces/<key>/`` where ``key`` hashes the trace's identity: device, inode, size,
modification and status change times, and a digest of its first and last 4 KiB
(:func:`identity`), so a rewritten trace is never served stale. Writers add tables to an
entry one at a time under a lock on it (:func:`writing`); each table is written under a
temporary ``*.partial`` name, renamed into place when complete and only then listed in
``manifest.json``, which is all a reader trusts. So a run that is killed leaves a partial
file that is never read (the next writer removes it), two concurrent runs both succeed (the
second finds what the first wrote and adds only what is still missing), and a reader never
waits: a table rewritten with more columns replaces the older file, which a reader that opened
it keeps reading.
Each use touches the entry; when the cache grows past ``max_bytes`` the least recently used
entries are removed, but never one a run is reading (:func:`hold`: a shared lock on the
entry's ``.readers`` file for as long as it reads it, :mod:`tracelens.cache_leases`), and
``tracelens cache clear`` passes over those too; both say what they kept
(:mod:`tracelens.cache_evict`). A ``.nsys-rep``'s SQLite export is an entry too
(``report-<key>/``, with a manifest of its own): counted, capped, evicted and leased alike. A cache directory that cannot be written degrades to direct reads:
the library reports one notice, the command line prints it.

The library never prints: builds report through a ``progress(message, fraction)`` callback
(a message first, saying what is cached where; then fractions 0..1; notices as messages).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

# hold (and READERS) re-exported: cache.hold is the lease the readers take (trace/lazy.py)
from .cache_leases import READERS, hold, lock_shared  # noqa: F401
from .errors import UsageError

if TYPE_CHECKING:
    import duckdb

# Bump when the files or the key change meaning: older entries are then rebuilt, and evicted
# first. 3: the key holds the status change time (format 2 keys served a trace rewritten
# in place with its mtime restored; its runs could also keep work derived from placeholders).
CACHE_FORMAT = 3
ENV_DIR = "TRACELENS_CACHE_DIR"
ENV_OFF = "TRACELENS_NO_CACHE"
ENV_MIN_MB = "TRACELENS_CACHE_MIN_MB"
ENV_MAX_MB = "TRACELENS_CACHE_MAX_MB"
# Below this a trace is read directly: an export of 50 MB (~400k kernels) answers census
# in ~0.3 s through the scanner, while building its cache costs ~1 s, which a user who runs
# one command never gets back.
DEFAULT_MIN_MB = 50.0
# The cache of a 612 MB export with 5M kernels is ~100-150 MB; 5 GB holds dozens of them.
DEFAULT_MAX_MB = 5_000.0
HEADER_BYTES = 4096
MANIFEST = "manifest.json"
LOCK = ".lock"
PARTIAL = ".partial"
# A .nsys-rep's SQLite export: the directory ``report-<key>/`` (key: the report's identity).
REPORT_PREFIX = "report-"
REPORT_EXPORT = "export.sqlite"

Progress = Callable[[str | None, float | None], None]


@dataclass(frozen=True)
class Settings:
    """Where the cache lives and when it is used (from the environment by default)."""

    root: Path
    enabled: bool = True
    min_bytes: int = int(DEFAULT_MIN_MB * 1e6)
    max_bytes: int = int(DEFAULT_MAX_MB * 1e6)

    @classmethod
    def from_env(cls, enabled: bool | None = None) -> Settings:
        off = os.environ.get(ENV_OFF, "").strip().lower() not in ("", "0", "false", "no")
        return cls(
            root=default_root(),
            enabled=(not off) if enabled is None else enabled,
            min_bytes=int(_env_mb(ENV_MIN_MB, DEFAULT_MIN_MB) * 1e6),
            max_bytes=int(_env_mb(ENV_MAX_MB, DEFAULT_MAX_MB) * 1e6),
        )


def _env_mb(name: str, default: float) -> float:
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{name}={text!r} is not a number of MB") from None
    if value < 0:
        raise UsageError(f"{name}={text!r} must be 0 or more (MB)")
    return value


def default_root() -> Path:
    """``$TRACELENS_CACHE_DIR``, ``$XDG_CACHE_HOME/tracelens`` or ``~/.cache/tracelens``.
    A relative ``XDG_CACHE_HOME`` is ignored, as the XDG spec says (it made the cache in the
    working directory, which may be the trace's own)."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR]).expanduser()
    xdg = Path(os.environ.get("XDG_CACHE_HOME", "")).expanduser()
    if xdg.is_absolute():
        return xdg / "tracelens"
    return Path.home() / ".cache" / "tracelens"


# -- identity -------------------------------------------------------------------------------
def identity(path: Path) -> dict[str, int | str]:
    """What makes a cached copy valid: the file's device, inode, size, modification time and
    status change time (ns), and a digest of its first and last ``HEADER_BYTES``.

    The change time is what tells a rewrite that keeps the inode, the size and the mtime
    (``cat new > old`` then ``touch -d``; cp -p, rsync -t and tar x restore mtimes) from the
    file it replaced: two fresh exports of one size can share their first and last 4 KiB
    (SQLite's header change counter included) and differ only in between, and no user call
    can set the change time back. The price: renaming, chmod or touch also changes it, so
    the next run caches the trace again."""
    st = path.stat()
    digest = hashlib.sha256()
    with path.open("rb") as f:
        digest.update(f.read(HEADER_BYTES))
        if st.st_size > HEADER_BYTES:
            f.seek(max(HEADER_BYTES, st.st_size - HEADER_BYTES))
            digest.update(f.read(HEADER_BYTES))
    return {
        "dev": st.st_dev,
        "inode": st.st_ino,
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
        "content": digest.hexdigest(),
    }


def entry_key(ident: dict[str, int | str]) -> str:
    text = json.dumps({"format": CACHE_FORMAT, **ident}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


# -- lookup and build ----------------------------------------------------------------------
def traces_dir(root: Path) -> Path:
    return root / "traces"


def lookup(root: Path, ident: dict[str, int | str]) -> Path | None:
    """The entry for ``ident`` (and mark it used), or None. An entry holds what earlier runs
    cached of the trace: :func:`cached_columns` says which tables and columns."""
    entry = traces_dir(root) / entry_key(ident)
    manifest = _read_manifest(entry)
    if manifest is None or manifest.get("identity") != ident:
        return None
    with contextlib.suppress(OSError):  # a read-only cache still serves; LRU just ages
        os.utime(entry / MANIFEST)
    return entry


def _read_manifest(entry: Path, any_format: bool = False) -> dict | None:
    """The entry's manifest, or None when it has none or (unless ``any_format``) one of
    another cache format, which this version never reads."""
    try:
        data = json.loads((entry / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return data if any_format or data.get("format") == CACHE_FORMAT else None


def cached_columns(entry: Path) -> dict[str, tuple[str, ...]]:
    """nsys table -> the columns its ``<table>.parquet`` in ``entry`` holds, as the manifest
    lists them (a file is listed only once it is complete)."""
    manifest = _read_manifest(entry) or {}
    tables = manifest.get("tables")
    if not isinstance(tables, dict):
        return {}
    # A listed file that is gone or is not whole Parquet (emptied or cut short by hand, or by
    # a disk that failed under it) is not cached: written again when a statement needs it,
    # where reading it was an internal error ("too small to be a Parquet file").
    return {t: tuple(c) for t, c in tables.items() if _whole_parquet(entry / f"{t}.parquet")}


def _whole_parquet(path: Path) -> bool:
    """``path`` ends as a Parquet file does (its footer's magic): 4 bytes read, not the file."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() < 12:  # magic, footer length, magic: the smallest Parquet file
                return False
            f.seek(-4, os.SEEK_END)
            return f.read(4) == b"PAR1"
    except OSError:
        return False


@dataclass(frozen=True)
class Table:
    """One file of an entry: ``file`` (``<nsys table>.parquet``), the SQL that fills it, the
    columns that SQL returns, and its share of the work (rows x columns) for the progress
    fraction."""

    file: str
    select: str
    columns: tuple[str, ...] = ()
    weight: float = 1.0


@contextlib.contextmanager
def writing(settings: Settings, ident: dict[str, int | str], source: Path) -> Iterator[Path]:
    """The entry for ``ident``, created if needed, locked against other writers while the
    block adds tables to it (:func:`add`); then the least recently used other entries are
    evicted (:func:`.cache_evict.evict`). Readers never wait: each file appears by an atomic
    rename, and the manifest lists it afterwards. A run killed inside the block leaves at
    most a ``*.partial`` file, never read, removed by the next writer. Raises OSError when
    the cache directory cannot be written (the caller reads directly)."""
    import fcntl

    entry = traces_dir(settings.root) / entry_key(ident)
    entry.mkdir(parents=True, exist_ok=True)
    lease = lock_shared(entry)  # no other run's eviction removes it while it is written
    with lease, (entry / LOCK).open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released by the kernel if this run dies
        for partial in entry.glob(f"*{PARTIAL}"):  # left by a writer that was killed
            partial.unlink(missing_ok=True)
        manifest = _read_manifest(entry)
        if manifest is None or manifest.get("identity") != ident:
            manifest = {"format": CACHE_FORMAT, "source": str(source), "identity": ident}
            manifest.update(tables={}, built_s=0.0, created=time.time())
            _write_manifest(entry, manifest)
        try:
            yield entry
        except BaseException:
            if not cached_columns(entry):  # nothing was cached: leave no entry behind
                shutil.rmtree(entry, ignore_errors=True)
            raise
    # imported here: cache_evict reads the entries through this module's layout
    from .cache_evict import evict

    evict(settings, keep={entry.name})


def _write_manifest(entry: Path, manifest: dict) -> None:
    tmp = entry / f"{MANIFEST}.{os.getpid()}{PARTIAL}"
    tmp.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    os.replace(tmp, entry / MANIFEST)


def add(
    con: duckdb.DuckDBPyConnection,
    entry: Path,
    table: Table,
    progress: Progress | None = None,
    done: tuple[float, float] = (0.0, 1.0),
) -> None:
    """Write ``table`` (a query on ``con``) into ``entry`` (inside :func:`writing`): to a
    ``.partial`` name, renamed over any older, narrower copy (a reader that opened that one
    keeps it), then listed in the manifest. ``done``: the progress fraction before and
    after this table."""
    started = time.perf_counter()
    partial = entry / f"{table.file}.{os.getpid()}{PARTIAL}"
    try:
        _copy(con, table, partial)
        os.replace(partial, entry / table.file)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    manifest = _read_manifest(entry) or {}
    manifest.setdefault("tables", {})[table.file.removesuffix(".parquet")] = list(table.columns)
    manifest["built_s"] = round(manifest.get("built_s", 0.0) + time.perf_counter() - started, 3)
    _write_manifest(entry, manifest)
    if progress:
        progress(None, min(done[1], 0.99) if done[1] < 1.0 else 1.0)


def _copy(con: duckdb.DuckDBPyConnection, table: Table, dest: Path) -> None:
    """COPY one table to Parquet: format version 2 (delta encodings: sorted times and
    small ids shrink ~2.4x with no codec) with snappy, and row groups of 122,880 rows (min/max
    statistics fine enough for time-window scans to skip most of a big table). Measured on
    the 5 kernel columns census reads, 5M rows (CPU s to write / to read census's aggregate,
    MB): v2 + snappy 1.38 / 0.21, 51; v1 + zstd (before) 1.72 / 0.29, 39; v1 uncompressed
    1.64 / 0.20, 126; v2 + zstd level 1 1.40 / 0.26, 49; the sqlite scan alone is 1.05."""
    # The select is ours (built from _schema's constant identifiers); the file name is bound
    # as a variable, the one value that comes from outside.
    con.execute("SET VARIABLE cache_file = $f", {"f": str(dest)})
    copy = (
        f"COPY ({table.select}) TO (getvariable('cache_file')) "
        "(FORMAT parquet, COMPRESSION snappy, PARQUET_VERSION V2, ROW_GROUP_SIZE 122880)"
    )
    with _parallel_unless_batched(con, copy):
        con.execute(copy)


@contextlib.contextmanager
def _parallel_unless_batched(con: duckdb.DuckDBPyConnection, copy: str) -> Iterator[None]:
    """Run ``copy`` on every DuckDB thread, its rows in any order, when it reads a source
    without batch indexes (DuckDB's sqlite scanner): an ordered COPY from such a source runs
    its whole pipeline on one thread (``COPY_TO_FILE``, not ``BATCH_COPY_TO_FILE``), so the
    scan of the export, four fifths of the copy, took all of its wall time. With
    ``preserve_insertion_order`` off for the copy the scanner's threads each read their own
    ranges of rowids and write their own row groups: the same rows, those of one range in
    the export's order, the ranges in the order the threads take and finish them (a table
    of one range, as in every shared test trace, keeps the export's order). Copies DuckDB
    writes in order in parallel anyway (from temporary tables: the strings, the NVTX rows
    with their rowids) keep their order. The setting is put back after, also when the copy
    fails.

    Readers must not depend on the row order: queries order what they show by the rows'
    columns, and the step search, util and the fingerprint sort on keys of them
    (``fingerprint/order.py`` keeps read order only among rows equal in every key). Checked:
    every command of ``bench/run.py --commands`` gave byte-identical output on the
    5M-kernel trace from an ordered and an unordered cache (2026-12-05), and
    tests/test_cache.py compares cached and direct answers on a kernel table of three
    rowid ranges. Measured on the 5M-kernel trace (census's three kernel columns, CPU s,
    load 40-120): ordered on one thread 1.7-2.2, unordered on two 2.1-2.3 (the same work
    split over two threads); restoring the export's order after a parallel read costs more
    than it saves (a sort by rowid in DuckDB 2.9-3.4 CPU s and 520 MB, in polars 3.4-4.1
    and 690 MB).

    Before (f9f8a0d) such copies ran on one thread in the export's order; measured and
    dropped then (2026-12-05, branch buildwall-streamed): the SQLite scan on a second thread
    (a cursor's rows handed over as pyarrow batches), +0.13-0.41 CPU s and +55 MB for a
    critical path ~1.6 -> ~1.5 s; ranges of rowids read on separate connections cost more,
    since neither ``sqlite_scan`` nor an attached table pushes a rowid filter down (each
    part scans the whole table) and ``sqlite_query`` returns every column as text."""
    from ._fetch import insertion_order_off

    plan = " ".join(row[1] for row in con.execute("EXPLAIN " + copy).fetchall())
    if "BATCH_COPY_TO_FILE" in plan:
        yield
        return
    with insertion_order_off(con):
        yield


# -- derived files -------------------------------------------------------------------------
# A derived file holds what tracelens computed from the cached tables (util's GPU work in
# sweep order), listed in the manifest under DERIVED with a version that names what made
# it: a reader takes it only at the version it expects, so a change to what makes it is
# never served stale (the file is then rewritten).
DERIVED = "derived"


def derived_path(entry: Path, name: str, version: str) -> Path | None:
    """``entry``'s derived file ``name`` when its manifest lists it at ``version``, once
    the files this process handed to the writing thread are written (:mod:`.keep_writer`):
    none is looked for while it is being written."""
    from .keep_writer import settle

    settle()
    listed = (_read_manifest(entry) or {}).get(DERIVED)
    if isinstance(listed, dict) and listed.get(name) == version and (entry / name).is_file():
        return entry / name
    return None


def add_derived(
    settings: Settings,
    ident: dict[str, int | str],
    source: Path,
    name: str,
    version: str,
    write: Callable[[Path], None],
) -> None:
    """Write the derived file ``name`` of the entry for ``ident`` with ``write(path)``
    (under the entry's lock, to a partial name renamed into place, then listed at
    ``version``, as :func:`add` does for tables). Raises OSError when the cache directory
    cannot be written."""
    with writing(settings, ident, source) as entry:
        started = time.perf_counter()
        partial = entry / f"{name}.{os.getpid()}{PARTIAL}"
        try:
            write(partial)
            os.replace(partial, entry / name)
        except BaseException as exc:
            partial.unlink(missing_ok=True)
            wrapped = _as_os_error(exc)
            if wrapped is exc:
                raise
            raise wrapped from exc
        manifest = _read_manifest(entry) or {}
        manifest.setdefault(DERIVED, {})[name] = version
        manifest["built_s"] = round(manifest.get("built_s", 0.0) + time.perf_counter() - started, 3)
        _write_manifest(entry, manifest)


_OS_ERROR = re.compile(r"\(os error (\d+)\)")


def _as_os_error(exc: BaseException) -> BaseException:
    """``exc`` as the OSError it wraps (add_derived's callers give up keeping the file on an
    OSError, as the docstring says it raises): polars reports a write that failed (a full disk)
    as a ComputeError ending "(os error 28)", which was an internal error; any other
    exception is itself."""
    match = None if isinstance(exc, OSError) else _OS_ERROR.search(str(exc))
    if match is None:
        return exc
    code = int(match.group(1))
    return OSError(code, os.strerror(code))
