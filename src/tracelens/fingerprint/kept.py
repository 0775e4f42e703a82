"""A cached trace's fingerprint document, kept in its cache entry.

A document depends on the trace and on tracelens alone (no option changes it), and building
one reads and sorts every launch: ~2.7 CPU s on the 5M-kernel bench trace read from the
cache, where census takes ~0.6. The first run that builds it through a cache entry keeps its
text beside the cached tables (a derived file of :mod:`tracelens.cache`, written and read by
:func:`tracelens.util_workfile.write_kept` / ``read_kept``), and later runs read it back.
Its version is a digest of every source, query and data file of tracelens (and the versions
of DuckDB and polars, whose arithmetic and sorts the document goes through), so a tracelens
whose document could differ in any way never reads one another kept; a direct read (no
cache entry) builds the document as before.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..trace import Trace


def _version() -> str:
    from .._resources import code_digest

    return code_digest()


def _name() -> str:
    """The file's name carries its version: tracelens versions sharing one cache directory
    each keep their own."""
    return f"tracelens_fingerprint-{_version()}.parquet"


def read(trace: Trace) -> dict[str, Any] | None:
    """The document an earlier run kept for ``trace``, or None (none kept, another version,
    a direct read, or a file removed or damaged meanwhile)."""
    from ..util_workfile import keeps, read_kept

    if not keeps(trace):
        return None
    frame = read_kept(trace, _name(), _version())
    if frame is None or frame.height != 1 or "document" not in frame.columns:
        return None
    try:
        return json.loads(frame["document"][0])
    except (TypeError, ValueError):
        return None


def write(trace: Trace, doc: dict[str, Any]) -> None:
    """Keep ``doc`` (``trace``'s document) in its cache entry, when it reads one."""
    import polars as pl

    from ..util_workfile import keeps, write_kept

    if keeps(trace):
        text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        write_kept(trace, _name(), _version(), pl.DataFrame({"document": [text]}))
