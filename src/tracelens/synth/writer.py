"""Writing the export: the rows nsys always writes (metadata, session start, analysis span,
``ENUM_*`` tables), the order tables are created in, and one transaction into SQLite."""

from __future__ import annotations

import datetime as _dt
import os
import sqlite3
from pathlib import Path
from typing import Any

from .ddl import EVENT_TABLES, TableDef, ddl_path, parse_ddl, version_key
from .vocab import ENUM_ALIASES, ENUMS

# The order tables are created in (roughly nsys's own); others follow alphabetically.
_FIRST = (
    "StringIds",
    "TARGET_INFO_SYSTEM_ENV",
    "TARGET_INFO_SESSION_START_TIME",
    "ANALYSIS_DETAILS",
    "PROCESSES",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "NVTX_EVENTS",
)
_LAST = (
    "ThreadNames",
    "TARGET_INFO_GPU",
    "TARGET_INFO_CUDA_GPU",
)
_META_TABLES = ("EXPORT_META_DATA", "META_DATA_CAPTURE", "META_DATA_EXPORT")
_RANK = {t: i for i, t in enumerate(_FIRST)}

SYNTHETIC_MARKER = ("TRACELENS_SYNTHETIC", "tracelens.synth")


def _utc_text(ns: int) -> str:
    t = _dt.datetime.fromtimestamp(ns // 1_000_000_000, tz=_dt.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S")


def _creation_order(table: str) -> tuple[int, str]:
    if table in _RANK:
        return (0, f"{_RANK[table]:03d}")
    if table in _LAST:
        return (2, f"{_LAST.index(table):03d}")
    if table.startswith("ENUM_"):
        return (3, table)
    if table in _META_TABLES:
        return (4, table)
    return (1, table)


def _insert(con: sqlite3.Connection, tdef: TableDef, rows: list[dict[str, Any]]) -> None:
    """Create ``tdef``'s table and insert ``rows``: text bound as TEXT (bytes too), a
    missing NOT NULL field as "" or 0, any other missing field as NULL."""
    con.execute(tdef.sql)
    placeholders = ", ".join("CAST(? AS TEXT)" if t == "TEXT" else "?" for t in tdef.types)
    cols = ", ".join(f'"{c}"' for c in tdef.columns)
    defaults = [
        ("" if t == "TEXT" else 0) if nn else None
        for t, nn in zip(tdef.types, tdef.notnull, strict=True)
    ]
    pairs = list(zip(tdef.columns, defaults, strict=True))
    con.executemany(
        f'INSERT INTO "{tdef.name}" ({cols}) VALUES ({placeholders})',
        (tuple(d if (v := row.get(c)) is None else v for c, d in pairs) for row in rows),
    )


class WriterMethods:
    """:meth:`write` and the rows it adds, as :class:`~tracelens.synth.TraceBuilder`
    methods (they read the builder's schema, versions, session start, strings and rows)."""

    schema: str
    vm_id: int
    product_version: str | None
    session_start_utc_ns: int
    _rows: dict[str, list[dict[str, Any]]]
    _string_values: list[str | bytes]
    _extra_metadata: list[tuple[str, str | bytes]]

    def _span(self) -> tuple[int, int]:
        starts, ends = [], []
        for table in EVENT_TABLES:
            for r in self._rows.get(table, ()):
                starts.append(r["start"])
                ends.append(r["end"] if r.get("end") is not None else r["start"])
        return (min(starts), max(ends)) if starts else (0, 0)

    def _metadata_rows(self, table: str) -> list[tuple[str, str | bytes]]:
        version = self.product_version or ""
        major, minor, micro = self.schema.split(".")
        rows: list[tuple[str, str | bytes]] = [
            ("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"),
            ("EXPORT_PRODUCT_VERSION", version),
            ("EXPORT_PRODUCT_DATE", ".".join(version.split(".")[:2])),
            ("EXPORT_SCHEMA_VERSION", self.schema),
            ("EXPORT_SCHEMA_VERSION_MAJOR", major),
            ("EXPORT_SCHEMA_VERSION_MINOR", minor),
            ("EXPORT_SCHEMA_VERSION_MICRO", micro),
            ("EXPORT_PLATFORM", "linux-desktop"),
            ("EXPORT_ARCH", "x64"),
            ("EXPORT_TIME_UTC", _utc_text(self.session_start_utc_ns + 60_000_000_000)),
        ]
        if table == "EXPORT_META_DATA":  # <= 3.0.0; note the misspelled OUTUPT keys
            rows += [
                ("EXPORT_INPUT_FILE", "(removed)"),
                ("EXPORT_OUTUPT_FILE", "(removed)"),
                ("EXPORT_OVERWRITE", "true"),
                ("EXPORT_LAZY", "true"),
            ]
        else:
            out = "OUTUPT" if version_key(self.schema) < (3, 23) else "OUTPUT"
            rows += [
                ("EXPORT_PARAM_INPUT_FILE", "(removed)"),
                (f"EXPORT_PARAM_{out}_FILE", "(removed)"),
                ("EXPORT_PARAM_OVERWRITE", "true"),
                ("EXPORT_PARAM_LAZY", "true"),
                ("EXPORT_PARAM_TIME_NORMALIZE", "false"),
                ("EXPORT_PARAM_TIME_SHIFT", "0"),
                ("EXPORT_CONFIG_TIME_SHIFT", "0"),
            ]
        return rows + [SYNTHETIC_MARKER] + self._extra_metadata

    def _implicit_rows(self) -> dict[str, list[dict[str, Any]]]:
        """Rows of the tables nsys always writes (computed at write time)."""
        out: dict[str, list[dict[str, Any]]] = {}
        if not self.schema.startswith("none"):
            for table in ("EXPORT_META_DATA", "META_DATA_EXPORT"):
                if self.has_table(table):
                    out[table] = [{"name": k, "value": v} for k, v in self._metadata_rows(table)]
            if self.has_table("META_DATA_CAPTURE"):
                out["META_DATA_CAPTURE"] = [
                    {"name": "DEVICE_ID", "value": "Local (CLI)"},
                    {"name": "CAPTURE_EVENT_TYPE", "value": "Cuda"},
                ]
        if self.has_table("TARGET_INFO_SESSION_START_TIME"):
            text = _utc_text(self.session_start_utc_ns)
            out["TARGET_INFO_SESSION_START_TIME"] = [
                {"utcEpochNs": self.session_start_utc_ns, "utcTime": text, "localTime": text}
            ]
        if self.has_table("ANALYSIS_DETAILS"):
            first, last = self._span()
            out["ANALYSIS_DETAILS"] = [
                {
                    "globalVid": self.vm_id << 48,
                    "duration": last - first,
                    "startTime": first,
                    "stopTime": last,
                }
            ]
        for enum, values in ENUMS.items():
            for table in (enum, *ENUM_ALIASES.get(enum, ())):
                if self.table_def(table, borrow=False) is not None:
                    out[table] = [{"id": i, "name": n, "label": lab} for i, n, lab in values]
        return out

    def _tables(self) -> dict[str, list[dict[str, Any]]]:
        """Every table to write with its rows, in the order nsys creates them."""
        tables: dict[str, list[dict[str, Any]]] = {
            "StringIds": [{"id": i, "value": v} for i, v in enumerate(self._string_values)]
        }
        tables.update(self._implicit_rows())
        for table, rows in self._rows.items():
            tables.setdefault(table, []).extend(rows)
        return {t: tables[t] for t in sorted(tables, key=_creation_order)}

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the export to ``path`` (replacing it) in one transaction; returns the path.

        The schema DDL's ``CREATE INDEX`` statements run for the tables that exist (only the
        3.25.0 file has any: ``_nsysai_*`` indexes, which the nsys-ai tool had added to that
        real export).
        """
        path = Path(path)
        tables = self._tables()
        tmp = path.with_name(path.name + ".synth-tmp")
        tmp.unlink(missing_ok=True)
        con = sqlite3.connect(tmp, isolation_level=None)
        try:
            con.execute("PRAGMA synchronous = OFF")
            con.execute("PRAGMA cache_size = -65536")  # 64 MiB: faster index builds
            con.execute("BEGIN")
            for table, rows in tables.items():
                tdef = self.table_def(table, borrow=table in EVENT_TABLES)
                assert tdef is not None, table
                _insert(con, tdef, rows)
            # Indexes this schema's DDL defines, for the tables that exist.
            for itable, sql in parse_ddl(ddl_path(self.schema))[1]:
                if itable in tables:
                    con.execute(sql)
            con.execute("COMMIT")
        except BaseException:
            con.close()
            tmp.unlink(missing_ok=True)
            raise
        con.close()
        os.replace(tmp, path)
        return path
