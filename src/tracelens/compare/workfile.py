"""The diff's GPU work of a cached trace, kept sorted in its cache entry, and the kernel
tables the diff makes of it.

Every diff reads each side's GPU work (``queries/work_in_order.sql`` with the launch grid
and the short names) and sorts it in launch order (``util.ORDER``): on a million launches,
cached, ~0.2 CPU s to read and ~0.2 to sort, against ~0.35 for census of the trace. The
rows depend on the trace alone when no event filter applies, so the first cached diff that
reads them whole keeps them, sorted, with the start of each operation's launching call
(``launch_start``, and its thread ``launch_tid``: util then reads the figures of the API
calls, not every call; ~0.1 CPU s
per million calls), beside the cached tables (a derived file of
:mod:`tracelens.cache`, as :mod:`tracelens.util_workfile` keeps util's), and later diffs and
reports read back only the columns they need. The census tables of the kernels
(``queries/diff_kernels.sql`` by each name kind, ``queries/kernel_name_pairs.sql``: ~0.1 CPU
s each per million launches) and the trace's totals (``headline.trace_totals``: one row) are
kept the same way, each a small file. Only a trace read
through the cache keeps them; direct reads and filtered ones read the export as before. The
files' version hashes the SQL and the view definitions that make them, so a tracelens whose
rows would differ never reads an older one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from ..trace import Trace

__all__ = ["KernelTables", "holds", "keep", "keep_kernels", "keeps", "kept", "kept_kernels"]

# The files' names carry their version (:func:`_named`): two tracelens versions sharing one
# cache directory each keep their own files, instead of rewriting one name in turn.
NAME = "tracelens_diff_work"
# diff_kernels.sql's rows by name kind, and kernel_name_pairs.sql's
KERNELS = "tracelens_diff_kernels_{}"
PAIRS = "tracelens_diff_name_pairs"
# headline.trace_totals of the whole trace: one row
TOTALS = "tracelens_diff_totals"

# (diff_kernels by the diff's name kind, by demangled name, kernel_name_pairs): the last
# two for short names only, else None
KernelTables = tuple["pl.DataFrame", "pl.DataFrame | None", "pl.DataFrame | None"]


def _version() -> str:
    """The kept tables' version: :func:`tracelens._resources.code_digest` (the rows come
    from work_in_order.sql and the macros under it, util's sort, compare/headline.py's sums:
    any change to tracelens makes them anew, so none of those can be left out by mistake)."""
    from .._resources import code_digest

    return code_digest()


def _named(name: str) -> str:
    """The file name of the kept table ``name`` at this version."""
    return f"{name}-{_version()}.parquet"


def keeps(trace: Trace) -> bool:
    """Whether ``trace`` is read through a cache entry that can keep the rows."""
    from ..util_workfile import keeps as util_keeps

    return util_keeps(trace)


def kept(trace: Trace, columns: tuple[str, ...], name: str = NAME) -> pl.DataFrame | None:
    """``columns`` of the whole trace's rows (work_in_order.sql with $grid and $short, and
    launch_start and launch_tid: the start and thread of each operation's launching call;
    sorted by ``util.ORDER``;
    ``name``: another file kept here, every column of it when
    ``columns`` is empty), when an earlier diff kept them; else None."""
    from ..util_workfile import read_kept

    return read_kept(trace, _named(name), _version(), columns)


def holds(trace: Trace, name: str = NAME) -> bool:
    """Whether the trace's cache entry keeps ``name`` at this version (the whole trace's
    rows, by default), without reading it."""
    from ..cache import derived_path
    from ..util_workfile import keeps

    if not keeps(trace) or trace._lazy.entry is None:
        return False  # no entry yet: the read that makes it has not run, so nothing is kept
    return derived_path(trace._lazy.entry, _named(name), _version()) is not None


def keep(trace: Trace, work: pl.DataFrame, name: str = NAME) -> None:
    """Keep ``work`` (the whole trace's rows, every column, sorted; or with ``name``, another
    table of the whole trace) in the trace's cache entry for later diffs; nothing when the
    trace reads no cache entry or the cache cannot be written (this run has its rows either
    way)."""
    from ..util_workfile import write_kept

    write_kept(trace, _named(name), _version(), work)


def kept_kernels(trace: Trace, name_kind: str) -> KernelTables | None:
    """The kernel tables of the whole trace by ``name_kind`` (:data:`KernelTables`), when an
    earlier diff kept them; else None."""
    kernels = kept(trace, (), KERNELS.format(name_kind))
    if kernels is None or name_kind != "short":
        return None if kernels is None else (kernels, None, None)
    by_demangled, pairs = kept(trace, (), KERNELS.format("demangled")), kept(trace, (), PAIRS)
    return None if by_demangled is None or pairs is None else (kernels, by_demangled, pairs)


def keep_kernels(trace: Trace, name_kind: str, tables: KernelTables) -> None:
    """Keep the kernel tables of the whole trace (:data:`KernelTables` by ``name_kind``)."""
    kernels, by_demangled, pairs = tables
    keep(trace, kernels, KERNELS.format(name_kind))
    if by_demangled is not None and pairs is not None:
        keep(trace, by_demangled, KERNELS.format("demangled"))
        keep(trace, pairs, PAIRS)
