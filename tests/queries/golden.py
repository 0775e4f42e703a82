"""Golden tests for query files (Perfetto's stdlib tests are the model): a tiny trace built
by code, one query run with bound parameters, and the exact expected CSV beside this file in
``golden/<query>__<case>.csv``.

    from queries.golden import assert_golden
    assert_golden(fx.path, "kernel_summary", "two_devices", device=None, ...)

A helper file of macros or temp tables (``queries/_*.sql``) is not a query to run: its
golden is the result of a probe, a small test query in ``probes/<query>__<case>.sql`` that
calls its macros or reads its tables; the harness runs the probe named ``probe`` (by default
the case's own) instead when it exists.
Queries on the export's own tables (run by the library through ``Trace._sqlite_rows``) run
here through SQLite too: ``assert_golden(..., export_tables=True)``.

``TRACELENS_UPDATE_GOLDEN=1 pytest tests/queries`` rewrites the CSVs; review the diff before
committing it (a golden file is a claim about the query, not a snapshot to accept blindly).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

import tracelens
from tracelens import _resources

GOLDEN = Path(__file__).parent / "golden"
PROBES = Path(__file__).parent / "probes"


def query_csv(
    trace_path: str | os.PathLike[str],
    query: str,
    prepare: Callable[[tracelens.Trace], None] | None = None,
    *,
    probe: Path | None = None,
    **params: Any,
) -> str:
    """The result of ``queries/<query>.sql`` (or of the ``probe`` file) on one trace, as CSV
    text (header included). ``prepare(trace)`` runs first, for queries over temp tables the
    library fills. List columns are written as their values sorted and joined by spaces
    (CSV has no lists, and ``list(DISTINCT ...)`` has no order)."""
    text = probe.read_text() if probe is not None else _resources.query(query)
    with tracelens.open(trace_path) as trace:
        if prepare is not None:
            prepare(trace)
        frame = trace.sql(text, **params)
    lists = [name for name, dtype in frame.schema.items() if isinstance(dtype, pl.List)]
    if lists:
        frame = frame.with_columns(
            pl.col(lists).list.sort().cast(pl.List(pl.String)).list.join(" ")
        )
    return frame.write_csv()


def export_query_csv(trace_path: str | os.PathLike[str], query: str, **params: Any) -> str:
    """The result of ``queries/<query>.sql`` run by SQLite on the export's own tables, as CSV
    text. Text and BLOBs are read as bytes (as the library reads them): printable UTF-8 is
    written as text, anything else (a binary payload: nsys declares binaryData TEXT) as hex."""
    con = sqlite3.connect(f"file:{Path(trace_path)}?mode=ro", uri=True)
    con.text_factory = bytes
    try:
        cursor = con.execute(_resources.query(query), params)
        names = [d[0] for d in cursor.description]
        rows = [[_export_value(v) for v in row] for row in cursor]
    finally:
        con.close()
    return pl.DataFrame(rows, schema=names, orient="row").write_csv()


def _export_value(value: Any) -> Any:
    if not isinstance(value, bytes):
        return value
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return value.hex()
    return text if text.isprintable() else value.hex()


def assert_golden(
    trace_path: str | os.PathLike[str],
    query: str,
    case: str,
    prepare: Callable[[tracelens.Trace], None] | None = None,
    *,
    probe: str | None = None,
    export_tables: bool = False,
    **params: Any,
):
    """Run ``query`` on ``trace_path`` and compare with ``golden/<query>__<case>.csv``."""
    probe_path = PROBES / f"{query}__{probe or case}.sql"
    assert probe is None or probe_path.exists(), f"no probe file {probe_path.name}"
    if export_tables:
        actual = export_query_csv(trace_path, query, **params)
    else:
        found = probe_path if probe_path.exists() else None
        actual = query_csv(trace_path, query, prepare, probe=found, **params)
    expected_path = GOLDEN / f"{query}__{case}.csv"
    if os.environ.get("TRACELENS_UPDATE_GOLDEN"):
        expected_path.write_text(actual)
    assert expected_path.exists(), f"no golden file {expected_path.name}; see queries/golden.py"
    assert actual == expected_path.read_text(), f"{query} [{case}] differs from its golden CSV"
