"""The vendored nsys DDL: which export schemas exist, their ``CREATE`` statements parsed
into :class:`TableDef`, and where a table a schema lacks is borrowed from."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DDL_DIR = Path(__file__).resolve().parent.parent / "ddl"

# Export schema versions with a vendored DDL, oldest first. "none-2020.5" is an export made
# before nsys wrote a schema version (nsys 2020.5/2021.3: no metadata table at all).
SCHEMAS: tuple[str, ...] = (
    "none-2020.5",
    "2.9.1",
    "3.0.0",
    "3.4.0",
    "3.13.2",
    "3.23.3",
    "3.24.18",
    "3.25.0",
)
DEFAULT_SCHEMA = "3.25.0"

# Tables that receive events: these may be borrowed from another schema's DDL.
EVENT_TABLES = frozenset(
    {
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        "NVTX_EVENTS",
        "OSRT_API",
    }
)


@dataclass(frozen=True)
class TableDef:
    """One ``CREATE TABLE`` from a vendored DDL file."""

    name: str
    sql: str  # the statement verbatim (as nsys writes it into sqlite_master)
    columns: tuple[str, ...]
    types: tuple[str, ...]  # declared type, upper case ("INTEGER", "TEXT", "REAL")
    notnull: tuple[bool, ...]
    source: str  # the DDL file it came from


def ddl_path(schema: str, *, full: bool = False) -> Path:
    """The vendored DDL file of an export schema version."""
    check_schema(schema)
    return DDL_DIR / f"nsys_export_schema_{schema}{'_full' if full else ''}.sql"


def check_schema(schema: str) -> None:
    """Raise ValueError unless ``schema`` is one of :data:`SCHEMAS`."""
    if schema not in SCHEMAS:
        raise ValueError(
            f"unknown nsys export schema {schema!r}; choose one of: {', '.join(SCHEMAS)}"
        )


def version_key(schema: str) -> tuple[int, ...]:
    """``"3.23.3"`` -> (3, 23, 3), for ordering schemas; the pre-version export sorts first."""
    if schema.startswith("none"):
        return (0,)
    return tuple(int(p) for p in schema.split("."))


def _statements(text: str) -> list[str]:
    out, buf = [], ""
    for line in text.splitlines(keepends=True):
        if not buf and (not line.strip() or line.lstrip().startswith("--")):
            continue  # comments between statements are not part of any statement
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip().rstrip(";").rstrip())
            buf = ""
    return out


_CREATE_TABLE = re.compile(r'^CREATE\s+TABLE\s+"?(\w+)"?', re.IGNORECASE)
_CREATE_INDEX = re.compile(
    r'^CREATE\s+(?:UNIQUE\s+)?INDEX\s+.*?\bON\s+"?(\w+)"?', re.IGNORECASE | re.S
)


@cache
def parse_ddl(path: Path) -> tuple[dict[str, TableDef], tuple[tuple[str, str], ...]]:
    """Tables of one DDL file, and its CREATE INDEX statements as (table, sql)."""
    scratch = sqlite3.connect(":memory:")
    tables: dict[str, TableDef] = {}
    indexes: list[tuple[str, str]] = []
    for stmt in _statements(path.read_text(encoding="utf-8")):
        if m := _CREATE_TABLE.match(stmt):
            name = m.group(1)
            scratch.execute(stmt)
            info = scratch.execute(f'SELECT name, type, "notnull" FROM pragma_table_info("{name}")')
            cols = info.fetchall()
            tables[name] = TableDef(
                name=name,
                sql=stmt,
                columns=tuple(c[0] for c in cols),
                types=tuple((c[1] or "").upper() for c in cols),
                notnull=tuple(bool(c[2]) for c in cols),
                source=path.name,
            )
        elif m := _CREATE_INDEX.match(stmt):
            indexes.append((m.group(1), stmt))
    scratch.close()
    return tables, tuple(indexes)


def table_defs(schema: str) -> dict[str, TableDef]:
    """The tables the vendored DDL of ``schema`` defines (a real, lazily written export)."""
    tables, _ = parse_ddl(ddl_path(schema))
    return dict(tables)


@cache
def known_columns(table: str) -> frozenset[str]:
    """Every column ``table`` has in any vendored schema (to catch misspelled fields)."""
    cols: set[str] = set()
    for path in sorted(DDL_DIR.glob("nsys_export_schema_*.sql")):
        tdef = parse_ddl(path)[0].get(table)
        if tdef is not None:
            cols.update(tdef.columns)
    return frozenset(cols)


@cache
def resolve_table(schema: str, table: str, borrow: bool) -> TableDef | None:
    """The definition ``schema`` uses for ``table``: its own DDL's, else its ``_full`` DDL's,
    else (``borrow``) the nearest older schema's, else the nearest newer one's; None if none."""
    own = parse_ddl(ddl_path(schema))[0].get(table)
    if own is not None:
        return own
    full = ddl_path(schema, full=True)
    if full.exists() and table in parse_ddl(full)[0]:
        return parse_ddl(full)[0][table]
    if not borrow:
        return None
    key = version_key(schema)
    candidates = []
    for other in SCHEMAS:
        if other == schema:
            continue
        for path in (ddl_path(other), ddl_path(other, full=True)):
            if path.exists() and table in parse_ddl(path)[0]:
                okey = version_key(other)
                # nearest older first (its columns are a subset), then nearest newer
                rank = (0, tuple(-k for k in okey)) if okey < key else (1, okey)
                candidates.append((rank, parse_ddl(path)[0][table]))
                break
    return min(candidates, key=lambda c: c[0])[1] if candidates else None
