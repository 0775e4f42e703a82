"""Golden tests for query files (Perfetto's stdlib tests are the model): a tiny trace built
by code, one query run with bound parameters, and the exact expected CSV beside this file in
``golden/<query>__<case>.csv``.

    from queries.golden import assert_golden
    assert_golden(fx.path, "kernel_summary", "two_devices", device=None, ...)

``TRACELENS_UPDATE_GOLDEN=1 pytest tests/queries`` rewrites the CSVs; review the diff before
committing it (a golden file is a claim about the query, not a snapshot to accept blindly).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tracelens

GOLDEN = Path(__file__).parent / "golden"


def query_csv(
    trace_path: str | os.PathLike[str],
    query: str,
    prepare: Callable[[tracelens.Trace], None] | None = None,
    **params: Any,
) -> str:
    """The result of ``queries/<query>.sql`` on one trace, as CSV text (header included).
    ``prepare(trace)`` runs first, for queries over temp tables the library fills."""
    with tracelens.open(trace_path) as trace:
        if prepare is not None:
            prepare(trace)
        return trace.query(query, **params).write_csv()


def assert_golden(
    trace_path: str | os.PathLike[str],
    query: str,
    case: str,
    prepare: Callable[[tracelens.Trace], None] | None = None,
    **params: Any,
):
    """Run ``query`` on ``trace_path`` and compare with ``golden/<query>__<case>.csv``."""
    actual = query_csv(trace_path, query, prepare, **params)
    expected_path = GOLDEN / f"{query}__{case}.csv"
    if os.environ.get("TRACELENS_UPDATE_GOLDEN"):
        expected_path.write_text(actual)
    assert expected_path.exists(), f"no golden file {expected_path.name}; see queries/golden.py"
    assert actual == expected_path.read_text(), f"{query} [{case}] differs from its golden CSV"
