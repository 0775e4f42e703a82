"""The diff's GPU work of a cached trace, kept sorted in its cache entry.

Every diff reads each side's GPU work (``queries/work_in_order.sql`` with the launch grid
and the short names) and sorts it in launch order (``util.ORDER``): on a million launches,
cached, ~0.2 CPU s to read and ~0.2 to sort, against ~0.35 for census of the trace. The
rows depend on the trace alone when no event filter applies, so the first cached diff that
reads them whole keeps them, sorted, beside the cached tables (a derived file of
:mod:`tracelens.cache`, as :mod:`tracelens.util_workfile` keeps util's), and later diffs and
reports read back only the columns they need. Only a trace read through the cache keeps
one; direct reads and filtered ones read the export as before. The file's version hashes
the SQL and the view definitions that make the rows, so a tracelens whose rows would differ
never reads an older one.
"""

from __future__ import annotations

import contextlib
import hashlib
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    import polars as pl

    from ..trace import Trace

__all__ = ["keep", "keeps", "kept"]

NAME = "tracelens_diff_work.parquet"


@cache
def _version() -> str:
    """A digest of what makes the rows: work_in_order.sql, the shared macros it stands on,
    the views' definitions, and the sort (this module's file format)."""
    from .. import _resources, _schema

    digest = hashlib.sha256(b"work_in_order grid short, sorted by util.ORDER; v1")
    digest.update(_resources.query("work_in_order").encode())
    for path in sorted(_resources.queries_dir().glob("_*.sql")):
        digest.update(path.read_bytes())
    with open(_schema.__file__, "rb") as fh:
        digest.update(fh.read())
    return digest.hexdigest()[:16]


def keeps(trace: Trace) -> bool:
    """Whether ``trace`` is read through a cache entry that can keep the rows."""
    from ..util_workfile import keeps as util_keeps

    return util_keeps(trace)


def kept(trace: Trace, columns: tuple[str, ...]) -> pl.DataFrame | None:
    """``columns`` of the whole trace's rows (work_in_order.sql with $grid and $short,
    sorted by ``util.ORDER``), when an earlier diff kept them; else None."""
    import polars as pl

    from ..cache import derived_path

    entry = trace._lazy.entry if keeps(trace) else None  # None until a table is cached
    path = None if entry is None else derived_path(entry, NAME, _version())
    if path is None:
        return None
    try:
        return pl.read_parquet(path, columns=list(columns))
    except (OSError, pl.exceptions.PolarsError):  # removed or damaged meanwhile: read again
        return None


def keep(trace: Trace, work: pl.DataFrame) -> None:
    """Keep ``work`` (the whole trace's rows, every column, sorted) in the trace's cache
    entry for later diffs; nothing when the trace reads no cache entry or the cache cannot
    be written (this run has its rows either way)."""
    from ..cache import add_derived

    if not keeps(trace):
        return
    lazy = trace._lazy

    def write(path: Path) -> None:
        work.write_parquet(path, compression="snappy", statistics=False)

    with contextlib.suppress(OSError):
        add_derived(lazy.settings, lazy.ident, trace._source_file, NAME, _version(), write)
