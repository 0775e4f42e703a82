"""The DuckDB side: a private in-memory database that reads the export through DuckDB's
sqlite extension, loaded from a registry package by path, signature checks on.

The extension normally downloads at first use; machines that reach only a package registry
cannot do that, so the ``duckdb-extension-sqlite-scanner`` wheel (DuckDB's own signed binary,
built for exactly one DuckDB version) is a dependency and is loaded from its install path.
``TRACELENS_SQLITE_EXTENSION`` may name another signed extension file (other platforms).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from .errors import ExtensionError

EXTENSION_PACKAGE = "duckdb_extension_sqlite_scanner"
EXTENSION_ENV = "TRACELENS_SQLITE_EXTENSION"


@dataclass(frozen=True)
class Limits:
    """Caps for every DuckDB connection :func:`connect` opens: threads, and memory in bytes
    (None: DuckDB's default, every core and 80% of the machine's RAM)."""

    threads: int | None = None
    memory_limit: int | None = None


# A context variable rather than a connect() argument: the connections are opened deep
# inside Trace (its views, and the columnar cache built on a trace's first open), and every
# one of them must obey the caps a worker was given, not only the one handed back.
UNLIMITED = Limits()
_LIMITS: ContextVar[Limits] = ContextVar("tracelens_duckdb_limits", default=UNLIMITED)


@contextlib.contextmanager
def limits(*, threads: int | None = None, memory_limit: int | None = None) -> Iterator[Limits]:
    """Within this block every DuckDB connection opened (by ``tracelens.open`` and what it
    builds) runs with at most ``threads`` threads and ``memory_limit`` bytes (None: DuckDB's
    default). Connections opened before the block keep their settings."""
    token = _LIMITS.set(Limits(threads, memory_limit))
    try:
        yield _LIMITS.get()
    finally:
        _LIMITS.reset(token)


def extension_path() -> Path | None:
    """The signed sqlite extension file to load, or None to try DuckDB's own install."""
    import duckdb

    override = os.environ.get(EXTENSION_ENV)
    if override:
        path = Path(override)
        if not path.is_file():
            raise ExtensionError(
                f"{EXTENSION_ENV}={override}: no such file; point it at a sqlite_scanner.duckdb_extension"
            )
        return path
    try:
        import duckdb_extension_sqlite_scanner as pkg
    except ImportError:
        return None
    root = Path(pkg.__file__).resolve().parent / "extensions"
    wanted = root / f"v{duckdb.__version__}"
    found = sorted(wanted.glob("*.duckdb_extension"))
    if found:
        return found[0]
    shipped = ", ".join(sorted(p.name for p in root.glob("v*"))) or "none"
    raise ExtensionError(
        f"DuckDB's sqlite extension package is built for DuckDB {shipped} but DuckDB "
        f"v{duckdb.__version__} is installed; fix: pip install 'duckdb=={shipped.lstrip('v')}'"
    )


def connect(sqlite: bool = True):
    """A new in-memory DuckDB connection, capped by the enclosing :func:`limits` block if
    any, with the sqlite extension loaded unless ``sqlite`` is False (then
    :func:`load_sqlite` before reading an export: loading it costs ~0.13 CPU s, a third of a
    cached census, which reads only Parquet)."""
    import duckdb

    config: dict[str, object] = {
        # Never reach for the network: everything must already be on disk.
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        # What a query spills when it outgrows memory: an in-memory database's default is
        # '.tmp' in the working directory (often the trace's own, and left there if the run
        # is killed); nothing is written beside the input.
        "temp_directory": str(spill_directory()),
    }
    caps = _LIMITS.get()
    if caps.threads is not None:
        config["threads"] = caps.threads
    if caps.memory_limit is not None:
        config["memory_limit"] = f"{caps.memory_limit}B"
    con = duckdb.connect(":memory:", config=config)
    # DuckDB draws its own progress bar on the terminal for long queries; a library never
    # prints (cache builds report through tracelens.cache's progress callback instead).
    con.execute("SET enable_progress_bar = false")
    if sqlite:
        try:
            load_sqlite(con)
        except ExtensionError:
            con.close()
            raise
    return con


def spill_directory() -> Path:
    """Where DuckDB writes what a query spills (it makes the directory when it first
    spills, and removes its files when the connection closes): ``tracelens-spill-<uid>`` in
    the system's temporary directory (``TMPDIR``)."""
    import tempfile

    uid = os.getuid() if hasattr(os, "getuid") else os.getpid()
    return Path(tempfile.gettempdir()) / f"tracelens-spill-{uid}"


def load_sqlite(con) -> None:
    """Load DuckDB's sqlite extension into ``con`` (see the module docstring)."""
    import duckdb

    path = extension_path()
    try:
        if path is None:
            con.execute("LOAD sqlite_scanner")
        else:
            # LOAD takes no bound parameter; the path is our own install path, quoted.
            con.execute("LOAD '" + str(path).replace("'", "''") + "'")
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0]
        raise ExtensionError(
            f"cannot load DuckDB's sqlite extension ({first}); fix: "
            f"pip install 'duckdb-extension-sqlite-scanner=={duckdb.__version__}' "
            f"(or set {EXTENSION_ENV} to a signed sqlite_scanner.duckdb_extension)"
        ) from None
