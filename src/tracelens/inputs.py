"""Inputs other than a SQLite export: an Nsight Systems report (``.nsys-rep``/``.qdrep``),
exported with ``nsys`` into the cache directory, and a directory written by
``nsys export --type parquetdir`` (one ``<table>.parquet`` per nsys table), read in place.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ._sqlite import REPORT_SUFFIXES, SQLITE_MAGIC
from .errors import TraceError

if TYPE_CHECKING:
    import duckdb

    from .cache import Progress, Settings

PARQUET_SUFFIX = ".parquet"
# What an nsys export of a report takes, per MB of report, on a 2-core machine: only for the
# progress fraction while nsys runs (it reports none we can read).
EXPORT_S_PER_MB = 0.5


# -- a parquetdir export --------------------------------------------------------------------
def table_files(directory: Path) -> list[Path]:
    """The ``<table>.parquet`` files of ``directory``, by name: those whose table name is a
    plain identifier, as every nsys table's is (other Parquet files beside them, such as
    ``results-2.parquet``, are not tables of the export and are left alone)."""
    from ._schema import _IDENT

    files = directory.glob(f"*{PARQUET_SUFFIX}")
    return sorted(f for f in files if _IDENT.match(f.name[: -len(PARQUET_SUFFIX)]))


def is_parquet_dir(path: Path) -> bool:
    """Whether ``path`` is a directory holding ``<table>.parquet`` files."""
    return path.is_dir() and bool(table_files(path))


def input_files(path: Path) -> list[Path]:
    """The files an input is read from: a file itself, a parquetdir export's table files
    (``-o`` onto one of those replaced a table of the export)."""
    return table_files(path) if path.is_dir() else [path]


def input_bytes(path: Path) -> int:
    """The size of an input on disk: a file's size, or for a parquetdir export the sum of
    its ``<table>.parquet`` files (the directory entry's own size, 4 kB, says nothing)."""
    if path.is_dir():
        return sum(f.stat().st_size for f in table_files(path))
    return path.stat().st_size


def parquet_tables(con: duckdb.DuckDBPyConnection, directory: Path) -> dict[str, tuple[str, ...]]:
    """Every ``<table>.parquet`` of ``directory`` and its column names, in file order, read
    from the Parquet footers. A file that is not Parquet raises TraceError naming it."""
    import duckdb

    tables = {}
    for file in table_files(directory):
        try:
            rows = con.execute(
                "SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet($f))",
                {"f": str(file)},
            ).fetchall()
        except duckdb.Error as exc:
            first = str(exc).strip().splitlines()[0]
            raise TraceError(
                file, f"is not a readable Parquet file ({first}); export the directory again"
            ) from None
        tables[file.name[: -len(PARQUET_SUFFIX)]] = tuple(r[0] for r in rows)
    return tables


# -- an Nsight Systems report ---------------------------------------------------------------
def is_report(path: Path) -> bool:
    """A ``.nsys-rep``/``.qdrep`` file (not already a SQLite database under that name)."""
    if path.suffix.lower() not in REPORT_SUFFIXES or not path.is_file():
        return False
    try:
        with path.open("rb") as f:
            return not f.read(len(SQLITE_MAGIC)).startswith(SQLITE_MAGIC)
    except OSError:
        return False


def find_nsys() -> str | None:
    """The ``nsys`` on PATH, or None."""
    return shutil.which("nsys")


def export_command(report: Path, dest: Path) -> list[str]:
    return [
        "nsys",
        "export",
        "--type",
        "sqlite",
        "--force-overwrite",
        "true",
        "-o",
        str(dest),
        str(report),
    ]


def export_report(report: Path, settings: Settings, progress: Progress | None = None) -> Path:
    """The SQLite export of ``report``: from the cache when present, else written there by
    ``nsys export`` (never beside the report). Without ``nsys`` on PATH, or when the cache
    directory cannot be written, TraceError with the command to run by hand."""
    from . import cache, cache_evict

    by_hand = (
        "run `nsys export --type sqlite -o "
        f"{shlex.quote(report.with_suffix('.sqlite').name)} {shlex.quote(report.name)}` "
        "and pass the .sqlite file"
    )
    if report.suffix.lower() == ".qdstrm":
        raise TraceError(
            report,
            "is an unprocessed Nsight Systems capture (.qdstrm); import it with nsys's "
            f"QdstrmImporter to get a .nsys-rep, then {by_hand}",
        )
    nsys = find_nsys()
    if nsys is None:
        raise TraceError(report, f"is an Nsight Systems report, not its SQLite export; {by_hand}")
    ident = cache.identity(report)
    entry = cache.traces_dir(settings.root) / (cache.REPORT_PREFIX + cache.entry_key(ident))
    done = entry / cache.REPORT_EXPORT
    if done.is_file() and _reuse(entry, report, ident):
        if _unreadable(done) is None:
            return done
        done.unlink(missing_ok=True)  # a bad export an older version kept: export it again
    try:
        entry.mkdir(parents=True, exist_ok=True)
        partial = entry / f"export-{os.getpid()}.partial.sqlite"
        _hold_while_written(entry)  # `cache clear` passes over it while nsys writes it
    except OSError as exc:
        raise TraceError(
            report,
            f"cannot be exported: the cache directory {settings.root} is not writable "
            f"({exc.strerror}); {by_hand}",
        ) from None
    if progress:
        progress(f"exporting {report.name} to SQLite with nsys into {entry} (once)", 0.0)
    started = time.perf_counter()
    _run_nsys(nsys, report, partial, progress)
    if (problem := _unreadable(partial)) is not None:
        # nsys said it succeeded: kept, the bad file would be served on every later run
        partial.unlink(missing_ok=True)
        raise TraceError(
            report,
            f"nsys export wrote a file that is not a readable nsys export ({problem}); "
            f"run `{shlex.join(export_command(report, report.with_suffix('.sqlite')))}` to "
            "see why",
        )
    os.replace(partial, done)  # atomic: a killed export leaves only a .partial file
    _list(entry, report, ident, round(time.perf_counter() - started, 3))
    eviction = cache_evict.evict(settings, keep={entry.name})  # it counts against the cap like any
    if progress:
        progress(None, 1.0)
        if eviction.held:
            progress(cache_evict.held_note(eviction.held, settings.max_bytes), None)
    return done


def _unreadable(export: Path) -> str | None:
    """Why ``export`` does not open as an nsys export, by the checks opening a .sqlite makes
    (the file, its read-only connection and table list, an nsys table), or None."""
    from ._sqlite import NSYS_MARKER_TABLES, check_file, connect_readonly, table_columns

    try:
        check_file(export)
        con = connect_readonly(export)
        try:
            tables = table_columns(con, export)
        finally:
            con.close()
    except TraceError as exc:
        return exc.problem.split("; ")[0]  # the advice names the cache file: not the user's
    if not NSYS_MARKER_TABLES.intersection(tables):
        return "a SQLite database without nsys tables"
    return None


# Leases on the exports this process read or wrote (cache.hold), kept until it exits: the
# Trace reads the export by its path for as long as it is open, and nothing here knows when
# that ends; an export is evicted or cleared only once no running process has read it.
_HELD: dict[Path, object] = {}


def _hold_while_written(entry: Path) -> None:
    """Hold a lease on ``entry`` from before nsys writes the export into it (it has no
    manifest yet, which :func:`_hold` requires) for the rest of the process. Raises OSError
    when its readers file cannot be made."""
    from . import cache_leases

    if entry not in _HELD:
        _HELD[entry] = cache_leases.lock_shared(entry)


def _hold(entry: Path) -> bool:
    """Hold a lease on ``entry`` for the rest of the process; False when it is gone."""
    from . import cache

    if entry not in _HELD:
        lease = cache.hold(entry)
        if lease is None:
            return False
        _HELD[entry] = lease
    return True


def _reuse(entry: Path, report: Path, ident: dict) -> bool:
    """Hold and mark used the export in ``entry``; False when it was evicted meanwhile.
    The export itself is not touched: its times are part of its own identity, which keys
    its Parquet entry; the manifest's time is its last use."""
    from . import cache

    manifest = entry / cache.MANIFEST
    if not manifest.is_file():  # left by an older version: listed now, so counted and capped
        with contextlib.suppress(OSError):
            _list(entry, report, ident, None)
    if not _hold(entry) and not (entry / cache.REPORT_EXPORT).is_file():
        return False  # evicted meanwhile (a read-only cache gives no lease and loses nothing)
    with contextlib.suppress(OSError):  # a read-only cache still serves; LRU just ages
        os.utime(manifest)
    return True


def _list(entry: Path, report: Path, ident: dict, built_s: float | None) -> None:
    """Write the manifest that makes ``entry`` an entry (info, cap, eviction, clear)."""
    from . import cache

    manifest = {"format": cache.CACHE_FORMAT, "source": str(report), "identity": ident}
    manifest.update(kind="export", built_s=built_s, created=time.time())
    cache._write_manifest(entry, manifest)


def _run_nsys(nsys: str, report: Path, dest: Path, progress: Progress | None) -> None:
    argv = [nsys, *export_command(report, dest)[1:]]
    expected_s = max(1.0, report.stat().st_size / 1e6 * EXPORT_S_PER_MB)
    started = time.perf_counter()
    with subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    ) as proc:
        stderr_lines: list[bytes] = []
        reader = threading.Thread(target=lambda: stderr_lines.extend(proc.stderr), daemon=True)
        reader.start()
        while proc.poll() is None:
            if progress:
                progress(None, min(0.95, (time.perf_counter() - started) / expected_s))
            time.sleep(0.2)
        reader.join()
    if proc.returncode != 0 or not dest.is_file():
        dest.unlink(missing_ok=True)
        detail = b"".join(stderr_lines).decode("utf-8", "replace").strip().splitlines()
        raise TraceError(
            report,
            f"nsys export failed (exit {proc.returncode}"
            + (f": {detail[-1].strip()}" if detail else "")
            + f"); run `{shlex.join(argv)}` to see why",
        )
