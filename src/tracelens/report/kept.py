"""A cached trace's report page, kept in its cache entry.

A page depends on its traces (their content, and the paths its labels are made of), on
tracelens (every source, query, data and template file; the versions of DuckDB, polars and
Jinja2, whose arithmetic, sorts and escaping it goes through) and on the options it was
built with (``top``, ``name``, ``title``), nothing else. Building one through the cache still
reads, sorts and sweeps every GPU operation: ~5 CPU s on the 5M-kernel bench trace, where
census takes ~0.6. So the first run that builds a page through a cache entry keeps its text
beside the cached tables (a derived file of :mod:`tracelens.cache`, written and read by
:func:`tracelens.util_workfile.write_kept` / ``read_kept``, as
:mod:`tracelens.fingerprint.kept` keeps the fingerprint), and a later run with the same
traces and options reads it back. The page of two traces is kept in the first one's entry
when both are read through their entries, named after the second's entry too. The file's
name holds a digest of the options, the paths and the other traces' entries; its version,
a digest of tracelens, so a tracelens whose page could differ in any way never reads one
another kept. A direct read (no cache entry) builds the page as before.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..trace import Trace


def _version() -> str:
    from .._resources import code_digest

    return code_digest()


def _name(traces: list[Trace], options: dict[str, Any]) -> str | None:
    """The kept page's file name for ``traces`` (the first one's entry holds it) built with
    ``options``; None when a trace is not read through a cache entry that can keep it."""
    from ..cache import entry_key
    from ..util_workfile import keeps

    if not all(keeps(t) for t in traces):
        return None
    key = {
        "options": options,
        "paths": [str(t.path) for t in traces],
        "entries": [entry_key(t._lazy.ident) for t in traces[1:]],
    }
    text = json.dumps(key, sort_keys=True, ensure_ascii=False)
    return f"tracelens_report-{_version()}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.parquet"


def read(traces: list[Trace], options: dict[str, Any]) -> str | None:
    """The page an earlier run kept for ``traces`` and ``options``, or None (none kept,
    another version, a direct read, or a file removed or damaged meanwhile)."""
    from ..util_workfile import read_kept

    name = _name(traces, options)
    frame = None if name is None else read_kept(traces[0], name, _version())
    if frame is None or frame.height != 1 or "page" not in frame.columns:
        return None
    page = frame["page"][0]
    return page if isinstance(page, str) else None


def write(traces: list[Trace], options: dict[str, Any], page: str) -> None:
    """Keep ``page`` (of ``traces`` with ``options``) in the first trace's cache entry,
    when every trace reads one."""
    import polars as pl

    from ..util_workfile import write_kept

    name = _name(traces, options)
    if name is not None:
        write_kept(traces[0], name, _version(), pl.DataFrame({"page": [page]}))
