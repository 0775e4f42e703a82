"""A diff's board of two cached traces, kept in the first one's cache entry.

The board of two whole traces (no window, NVTX range or step selected) depends on the
traces (their content, and the paths their labels are made of), on tracelens (every source,
query, data and template file; the versions of DuckDB and polars) and on how it is shown
(the format, ``--top``, ``--name``, the table's width and colour), nothing else. Making it
through the cache still reads, orders and aligns every launch of both traces: a diff of the
5M-kernel bench trace with itself, with its kernel tables, totals, util's accounting and its
steps kept, took ~3 CPU s (census of it: ~1). So the first run through both traces' entries
keeps its text and its ``--fail-if`` figures beside the first trace's cached tables (a
derived file of :mod:`tracelens.cache`, written and read by
:func:`tracelens.util_workfile.write_kept` / ``read_kept``, as :mod:`tracelens.report.kept`
keeps a report page), and a later run with the same traces and view reads them back. The
file's name holds a digest of the view, the paths and the second trace's entry; its
version, a digest of tracelens, so a tracelens whose board could differ in any way never
reads one another kept. A direct read (no cache entry) makes the board as before.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .gates import Figures

if TYPE_CHECKING:
    from ..trace import Trace

__all__ = ["board", "read", "write"]

#: What a board is kept as: its text, and the figures ``--fail-if`` reads
Board = tuple[str, Figures]


def _version() -> str:
    from .._resources import code_digest

    return code_digest()


def _name(a: Trace, b: Trace, view: dict[str, Any]) -> str | None:
    """The kept board's file name for ``a`` and ``b`` shown as ``view``; None when a trace
    is not read through a cache entry that can keep it."""
    from ..cache import entry_key
    from ..util_workfile import keeps

    if not (keeps(a) and keeps(b)):
        return None
    paths = [(str(t.path), str(Path(t.path).resolve())) for t in (a, b)]
    key = {"view": view, "paths": paths, "entry_b": entry_key(b._lazy.ident)}
    text = json.dumps(key, sort_keys=True, ensure_ascii=False)
    return f"tracelens_diff_board-{_version()}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.parquet"


def read(a: Trace, b: Trace, view: dict[str, Any]) -> Board | None:
    """The board an earlier run kept for ``a``, ``b`` and ``view``, or None (none kept,
    another version, a direct read, or a file removed or damaged meanwhile)."""
    from ..util_workfile import read_kept

    name = _name(a, b, view)
    frame = None if name is None else read_kept(a, name, _version())
    if frame is None or frame.height != 1 or {"text", "figures"} - set(frame.columns):
        return None
    text, figures = frame["text"][0], frame["figures"][0]
    if not isinstance(text, str) or not isinstance(figures, str):
        return None
    try:
        kept = json.loads(figures)
        return text, Figures(kept["values"], kept["not_measured"])
    except (ValueError, KeyError, TypeError):
        return None


def write(a: Trace, b: Trace, view: dict[str, Any], kept: Board) -> None:
    """Keep the board ``kept`` (of ``a`` and ``b`` shown as ``view``) in ``a``'s cache
    entry, when both traces read one."""
    import polars as pl

    from ..util_workfile import write_kept

    name = _name(a, b, view)
    if name is None:
        return
    text, figures = kept
    data = {"values": dict(figures), "not_measured": figures.not_measured}
    try:
        figures_json = json.dumps(data)
    except (TypeError, ValueError):
        return  # a figure JSON cannot hold as it is: not kept, made again next time
    frame = pl.DataFrame({"text": [text], "figures": [figures_json]})
    write_kept(a, name, _version(), frame)


def board(a: Trace, b: Trace, view: dict[str, Any], make: Callable[[], Board]) -> Board:
    """The board of the whole traces ``a`` and ``b`` shown as ``view``: kept by an earlier
    run (:func:`read`), else ``make()``'s, kept for later runs (:func:`write`)."""
    kept = read(a, b, view)
    if kept is None:
        kept = make()
        write(a, b, view, kept)
    return kept
