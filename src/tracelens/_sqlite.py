"""Checking that a path is an nsys SQLite export, and opening it strictly read-only.

Everything here reads; nothing writes. The SQLite connection is opened with
``mode=ro&immutable=1`` so SQLite neither takes locks nor creates journal/WAL files next to
the user's trace.
"""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
import stat
import urllib.parse
from pathlib import Path

from .errors import TraceError

SQLITE_MAGIC = b"SQLite format 3\x00"
REPORT_SUFFIXES = (".nsys-rep", ".qdrep", ".qdstrm")

# Tables whose presence marks an nsys export (any one suffices; CPU-only captures have no
# CUPTI tables, and exports before 2022.2 have no metadata table).
NSYS_MARKER_TABLES = frozenset(
    {
        "StringIds",
        "ThreadNames",
        "TARGET_INFO_GPU",
        "TARGET_INFO_SYSTEM_ENV",
        "TARGET_INFO_SESSION_START_TIME",
        "EXPORT_META_DATA",
        "META_DATA_EXPORT",
        "CUPTI_ACTIVITY_KIND_KERNEL",
    }
)


def check_file(path: Path) -> None:
    """Raise TraceError with a one-line explanation if ``path`` cannot be an nsys export."""
    if not path.exists():
        raise TraceError(path, "no such file")
    if path.is_dir():
        raise TraceError(
            path, "is a directory without nsys tables; pass an nsys export (.sqlite or parquetdir)"
        )
    try:
        st = path.stat()
    except OSError as exc:
        raise TraceError(path, f"cannot be read ({exc.strerror or exc})") from None
    # Before any open: opening a FIFO blocks until a writer appears.
    if not stat.S_ISREG(st.st_mode):
        raise TraceError(
            path, "is not a regular file (a pipe or device); pass the .sqlite file exported by nsys"
        )
    size = st.st_size
    try:
        with path.open("rb") as f:
            header = f.read(100)
    except PermissionError:
        raise TraceError(
            path, "cannot be read (permission denied); check its permissions"
        ) from None
    except OSError as exc:
        raise TraceError(path, f"cannot be read ({exc.strerror or exc})") from None
    if not header.startswith(SQLITE_MAGIC):
        if path.suffix.lower() in REPORT_SUFFIXES:
            raise TraceError(
                path,
                "is an Nsight Systems report, not its SQLite export; run "
                f"`nsys export --type sqlite -o {path.with_suffix('.sqlite').name} {path.name}` "
                "and pass the .sqlite file",
            )
        if size == 0:
            raise TraceError(
                path, "is empty (0 bytes); export the trace again with `nsys export --type sqlite`"
            )
        raise TraceError(
            path, "is not a SQLite database; pass the file written by `nsys export --type sqlite`"
        )
    if size < 100:
        raise TraceError(path, f"is truncated ({size} bytes); copy or export it again")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    page_count = int.from_bytes(header[28:32], "big")
    # The in-header page count is valid when the change counter matches "version-valid-for".
    if header[24:28] == header[92:96] and page_count and size < page_count * page_size:
        raise TraceError(
            path,
            f"is truncated ({size} of {page_count * page_size} bytes); copy or export it again",
        )
    # File format write/read versions 2 mean WAL mode. DuckDB's scanner opens such a file
    # read-write and creates -wal/-shm files beside it (nsys itself never writes WAL).
    if header[18] == 2 or header[19] == 2:
        raise TraceError(
            path,
            "is in SQLite WAL mode, which cannot be read without writing beside it; convert it "
            f"(or a copy) with `sqlite3 {shlex.quote(path.name)} 'PRAGMA journal_mode=DELETE'`",
        )


def connect_readonly(path: Path, shown_as: Path | None = None) -> sqlite3.Connection:
    """A read-only, lock-free SQLite connection. ``path`` must have passed check_file;
    errors name ``shown_as`` (the path as the user gave it)."""
    # quote the bytes: a path that is not UTF-8 (surrogate escapes in Python) stays exact
    uri = f"file:{urllib.parse.quote(os.fsencode(path))}?mode=ro&immutable=1"
    try:
        con = sqlite3.connect(uri, uri=True, check_same_thread=False)
        # Names written by the profiled program may not be valid UTF-8: keep the bytes and
        # decode them ourselves (see decode_text).
        con.text_factory = bytes
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise TraceError(
            shown_as or path, f"is corrupt or not a database (sqlite: {exc})"
        ) from None
    except UnicodeDecodeError as exc:
        # A corrupt schema's error quotes its bytes, which need not be UTF-8: Python cannot
        # decode SQLite's message and raises this instead of the DatabaseError.
        said = decode_text(exc.object) if isinstance(exc.object, bytes) else str(exc)
        raise TraceError(
            shown_as or path, f"is corrupt or not a database (sqlite: {said})"
        ) from None
    return con


def decode_text(value: object) -> str | None:
    """Text from the export as a user should see it: invalid UTF-8 bytes become ``\\xNN``."""
    if value is None:
        return None
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", errors="backslashreplace")
    return str(value)


def table_columns(con: sqlite3.Connection, path: Path) -> dict[str, tuple[str, ...]]:
    """Every table in the file and its column names, in file order."""
    try:
        names = [
            decode_text(r[0])
            for r in con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        tables = {}
        for name in names:
            # pragma_table_info takes the table name as a bound parameter.
            cols = con.execute("SELECT name FROM pragma_table_info(?)", (name,)).fetchall()
            tables[name] = tuple(decode_text(c[0]) for c in cols)
    except sqlite3.DatabaseError as exc:
        raise TraceError(path, f"is corrupt (sqlite: {exc}); copy or export it again") from None
    return tables


# -- what DuckDB's scanner says about a damaged export, as one line ---------------------------
_TYPE_MISMATCH = re.compile(
    r'Invalid type in column "(?P<column>[^"]+)": column was declared as (?P<declared>\w+), '
    r'found "(?P<value>.*)" of type "(?P<found>\w+)"'
)
_CORRUPT = ("malformed", "not a database", "disk I/O", "file is not a database")


def explain_scan_error(
    path: Path, con: sqlite3.Connection | None, tables: dict[str, tuple[str, ...]], exc: Exception
) -> TraceError | None:
    """The one-line TraceError for a DuckDB error caused by the export's content (values of
    the wrong type, damaged rows, a lock, corruption), or None when it is not about the file.
    ``con`` (the read-only SQLite connection, if any) finds which table holds a bad column."""
    from ._schema import DAMAGE_MARK, VIEWS

    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    if DAMAGE_MARK in first:
        detail = first.split(DAMAGE_MARK, 1)[1]
        return TraceError(path, f"is damaged: {detail}; export it again")
    m = _TYPE_MISMATCH.search(text)
    if m:
        column, found, value = m["column"], m["found"], m["value"]
        shown = value if len(value) <= 40 else value[:37] + "..."
        where = _table_with_bad_values(con, tables, column, VIEWS) or "a table"
        return TraceError(
            path,
            f"is damaged: {where}.{column} holds {found} ({shown!r}) where nsys writes "
            f"{m['declared']}s; export it again",
        )
    if "Overflow in" in first:
        return TraceError(
            path,
            f"is damaged: a time or size overflows 64-bit arithmetic ({first}); export it again",
        )
    if "database is locked" in first:
        return TraceError(
            path, "is locked by a process writing to it; wait for it to finish, or pass a copy"
        )
    if "attempt to write a readonly database" in first:
        return TraceError(
            path,
            "has an interrupted write beside it (a hot journal); copy the .sqlite file alone to "
            "another directory and pass the copy",
        )
    if any(word in first for word in _CORRUPT):
        return TraceError(path, f"is corrupt ({first}); copy or export it again")
    return None


def _table_with_bad_values(con, tables, column: str, views) -> str | None:
    """The first view table whose ``column`` holds a value that is not an integer or NULL."""
    if con is None or not _IDENT_RE.match(column):
        return None
    for table, _cols in views.values():
        if column in tables.get(table, ()):
            try:
                row = con.execute(
                    f'SELECT 1 FROM "{table}" WHERE typeof("{column}") NOT IN '
                    "('integer', 'null') LIMIT 1"
                ).fetchone()
            except sqlite3.DatabaseError:
                continue
            if row:
                return table
    return None


_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def strings_are_utf8(con: sqlite3.Connection) -> bool:
    """Whether every StringIds value is valid UTF-8 (checked here because DuckDB's scanner
    does not reject every invalid sequence: after a valid non-ASCII character it passes the
    bytes on, which later breaks polars, and it cuts a name short at others). ASCII values,
    the common case, cost one isascii() each."""
    for (value,) in con.execute("SELECT value FROM StringIds"):
        if isinstance(value, bytes | bytearray) and not value.isascii():
            try:
                bytes(value).decode("utf-8")
            except UnicodeDecodeError:
                return False
    return True


def sidecars(path: Path, shown_as: Path) -> list[Path]:
    """The SQLite WAL and journal files beside ``path``: DuckDB's scanner, which opens the file
    read-write, would create or rewrite files beside it (a ``-shm`` for a stray ``-wal``).
    A hot journal (a write that was interrupted: the file itself may be half-written) is a
    TraceError; the caller routes around the others."""
    journal = Path(f"{path}-journal")
    try:
        with journal.open("rb") as f:
            hot = any(f.read(28))  # a journal whose header is zeroed or empty is not hot
    except OSError:
        hot = False
    if hot:
        raise TraceError(
            shown_as,
            f"has an interrupted write ({journal.name} beside it is a hot journal: the file may "
            f"be half-written); run `sqlite3 {shlex.quote(shown_as.name)} 'PRAGMA "
            "integrity_check'` on it (or a copy with its journal) to roll the write back, or "
            "export it again",
        )
    return [p for p in (Path(f"{path}-wal"), journal) if p.exists()]
