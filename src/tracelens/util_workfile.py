"""Util's GPU work of a cached trace, kept sorted in its cache entry.

Every util and findings run reads the GPU operations (``queries/util_work.sql``) and sorts
them by device and start (:func:`tracelens.util.read_work`): on the 5M-kernel benchmark,
cached, ~0.3 CPU s to read and ~0.65 to sort, a third of ``util``. The rows depend on the
trace alone when no event filter applies, so the first run that reads them whole keeps
them, sorted, beside the cached tables (a derived file of :mod:`tracelens.cache`), and
later runs read that back (~0.14 CPU s; Parquet with snappy: 80 MB, written in ~0.55).
The rows keep the start of each operation's launching call too (``launch_start``, from
util's read of the calls when they are kept), so that later util runs read only the
synchronizing calls and the span of the calls (``queries/util_call_figures.sql``), not
every call (~0.45 CPU s and ~330 MB less, cached). Only a trace read through the cache
keeps one; direct reads and filtered ones read the export as before. The file's version
hashes the SQL and the view definitions that make the rows, so a tracelens whose rows
would differ never reads an older one.
"""

from __future__ import annotations

import contextlib
import hashlib
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    import polars as pl

    from .trace import Trace

__all__ = ["keep", "keeps", "kept", "read_kept", "write_kept"]


def _name() -> str:
    """The kept file's name carries its version: two tracelens versions sharing one cache
    directory then each keep their own file, instead of rewriting one name in turn."""
    return f"tracelens_util_work-{_version()}.parquet"


@cache
def _version() -> str:
    """A digest of what makes the rows: util_work.sql and util_calls.sql (the launch starts),
    the shared macros they stand on, the views' definitions, and the sort and columns (this
    module's file format)."""
    from . import _resources, _schema

    digest = hashlib.sha256(b"sorted by device, start; with launch_start; v2")
    digest.update(_resources.query("util_work").encode())
    digest.update(_resources.query("util_calls").encode())
    for path in sorted(_resources.queries_dir().glob("_*.sql")):
        digest.update(path.read_bytes())
    with open(_schema.__file__, "rb") as fh:
        digest.update(fh.read())
    return digest.hexdigest()[:16]


def keeps(trace: Trace) -> bool:
    """Whether ``trace`` is read through a cache entry that can keep the rows (the entry
    itself may be made by the read)."""
    trace.db  # noqa: B018  (opening the connection sets up the trace's cache, if any)
    lazy = trace._lazy  # the cache of a big export read through it (as stakeout_calls)
    return lazy is not None and not lazy.off


def _entry(trace: Trace) -> Path | None:
    """The cache entry the trace reads, when it reads one that it may also write."""
    return trace._lazy.entry if keeps(trace) else None


def kept(trace: Trace, *, context: bool) -> pl.DataFrame | None:
    """The whole trace's rows of :func:`tracelens.util.read_work` (with the context column
    when ``context``) and launch_start, sorted, when an earlier run kept them; else None."""
    work = read_kept(trace, _name(), _version())
    return work if work is None or context else work.drop("context")


def keep(trace: Trace, work: pl.DataFrame) -> None:
    """Keep ``work`` (the whole trace's rows of read_work, with context and launch_start,
    sorted) in the trace's cache entry for later runs."""
    write_kept(trace, _name(), _version(), work)


def read_kept(
    trace: Trace, name: str, version: str, columns: tuple[str, ...] = ()
) -> pl.DataFrame | None:
    """``columns`` (every one when empty) of the derived file ``name`` of the trace's cache
    entry, when it is listed there at ``version``; else None (also when it was removed or
    damaged meanwhile: the caller reads the trace again)."""
    import polars as pl

    from .cache import derived_path

    entry = _entry(trace)
    path = None if entry is None else derived_path(entry, name, version)
    if path is None:
        return None
    try:
        return pl.read_parquet(path, columns=list(columns) or None)
    except (OSError, pl.exceptions.PolarsError):
        return None


def write_kept(trace: Trace, name: str, version: str, frame: pl.DataFrame) -> None:
    """Keep ``frame`` as the derived file ``name`` at ``version`` of the trace's cache entry;
    nothing when the trace reads no cache entry or the cache cannot be written (this run
    has its rows either way)."""
    from .cache import add_derived

    if _entry(trace) is None:
        return
    lazy = trace._lazy

    def write(path: Path) -> None:
        frame.write_parquet(path, compression="snappy", statistics=False)

    with contextlib.suppress(OSError):
        add_derived(lazy.settings, lazy.ident, trace._source_file, name, version, write)
