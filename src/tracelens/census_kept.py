"""A cached trace's whole-trace kernel summary, kept in its cache entry.

The summary of every kernel (``queries/kernel_summary.sql`` with no filter) depends on the
trace, the name kind and the grouping alone, and it is a few hundred rows; computing it
aggregates every launch with an exact median: ~0.27 s of a cached census's ~0.5 s on the
5M-kernel bench trace. The first whole-trace census read through a cache entry keeps its
rows beside the cached tables (a derived file of :mod:`tracelens.cache`), and later census,
lineup and danger runs of the whole trace read them back. ``--top``, the output format and
the rendering do not change the rows, so every such run reads the same file; a filter
(``--start``/``--end``, ``--device``, ``--nvtx``, ``--step``...) computes afresh.

The rows are JSON, not Parquet: the command line renders census from plain rows without
importing polars or pyarrow (:mod:`tracelens.rows`), and JSON keeps Python's ints and
floats exactly (floats round-trip by their shortest repr). Its version is
:func:`tracelens._resources.code_digest`, as every kept file's: a tracelens whose rows could
differ in any way never reads another's. A direct read (no cache entry) keeps nothing.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from .rows import Rows
    from .trace import Trace

__all__ = ["MAX_ROWS", "read", "write"]

#: A summary of more rows than this is not kept: JSON costs ~4 us a row to write and ~1.5 to
#: read back, so a trace of 10^6 distinct kernel names would spend ~4 s writing a ~180 MB
#: file to save an aggregation DuckDB does in about a second; at this size the file is
#: ~4 MB, written in ~0.1 s. Real traces hold hundreds to a few thousand kernel names.
MAX_ROWS = 20_000


def _version() -> str:
    from ._resources import code_digest

    return code_digest()


def _name(name_kind: str, by_launch_config: bool) -> str:
    """The file's name carries what the rows depend on and their version."""
    grouping = "launch_config" if by_launch_config else "kernel"
    return f"tracelens_census_{name_kind}_{grouping}-{_version()}.json"


def read(trace: Trace, name_kind: str, by_launch_config: bool) -> Rows | None:
    """The whole-trace kernel summary an earlier run kept for ``trace``, or None (none kept,
    another version, a direct read, or a file removed or damaged meanwhile)."""
    from .rows import Rows
    from .util_workfile import kept_path

    path = kept_path(trace, _name(name_kind, by_launch_config), _version())
    if path is None:
        return None
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        columns, kinds, data = kept["columns"], kept["kinds"], kept["data"]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if not isinstance(data, list) or len(columns) != len(kinds):
        return None
    return Rows(tuple(columns), tuple(kinds), tuple(tuple(row) for row in data))


def write(trace: Trace, name_kind: str, by_launch_config: bool, rows: Rows) -> None:
    """Keep ``rows`` (``trace``'s whole-trace kernel summary) in its cache entry, when it
    reads one that can be written and they are at most :data:`MAX_ROWS`; nothing otherwise
    (this run has its rows either way)."""
    from .util_workfile import keep_file

    if rows.height > MAX_ROWS:
        return
    text = json.dumps(
        {"columns": list(rows.columns), "kinds": list(rows.kinds), "data": list(rows.data)},
        ensure_ascii=False,
        separators=(",", ":"),
    )

    def write_json(path: Path) -> None:
        path.write_text(text, encoding="utf-8")

    keep_file(trace, _name(name_kind, by_launch_config), _version(), write_json)
