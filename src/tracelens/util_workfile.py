"""What util and findings keep in a cached trace's entry, as derived files of
:mod:`tracelens.cache` (:func:`write_kept`, :func:`read_kept`, bundles of them).

The whole trace's accounting (:func:`keep_accounting`: util's tables, notes, window, the
figures of the API calls and the records the read kept) depends on the trace and on
tracelens alone, so a later ``util`` or ``findings`` of the cached trace reads it back
instead of reading and sweeping the GPU work again; findings keeps the rows of its GPU
rules too (:mod:`tracelens.findings`). Their version hashes every source, query and rule
file of tracelens with the polars and DuckDB versions: any change to what computes them
reads the trace again. No GPU work rows are kept: with the accounting and the GPU rules'
rows kept, no later util or findings run reads them (writing them cost a cached util's
first run ~0.8 of its ~3.5 CPU s on the 5M-kernel benchmark, findings' ~0.3). Only a
trace read through the cache keeps anything; direct reads and filtered ones compute as
before.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import polars as pl

    from .trace import Trace
    from .util import Util

__all__ = [
    "keep_accounting",
    "keep_file",
    "kept_path",
    "keeps",
    "code_version",
    "kept_accounting",
    "read_bundle",
    "read_kept",
    "write_bundle",
    "write_kept",
]


def keeps(trace: Trace) -> bool:
    """Whether ``trace`` is read through a cache entry that can keep the rows (the entry
    itself may be made by the read)."""
    trace.db  # noqa: B018  (opening the connection sets up the trace's cache, if any)
    lazy = trace._lazy  # the cache of a big export read through it (as stakeout_calls)
    return lazy is not None and not lazy.off


def _entry(trace: Trace) -> Path | None:
    """The cache entry the trace reads, when it reads one that it may also write."""
    return trace._lazy.entry if keeps(trace) else None


def kept_path(trace: Trace, name: str, version: str) -> Path | None:
    """The derived file ``name`` of the trace's cache entry, when it is listed there at
    ``version``; else None."""
    from .cache import derived_path

    entry = _entry(trace)
    return None if entry is None else derived_path(entry, name, version)


def read_kept(
    trace: Trace, name: str, version: str, columns: tuple[str, ...] = ()
) -> pl.DataFrame | None:
    """``columns`` (every one when empty) of the derived file ``name`` of the trace's cache
    entry, when it is listed there at ``version``; else None (also when it was removed or
    damaged meanwhile: the caller reads the trace again)."""
    import polars as pl

    path = kept_path(trace, name, version)
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

    def write(path: Path) -> None:
        frame.write_parquet(path, compression="snappy", statistics=False)

    # on the writing thread: the frame is not changed after this (polars frames are not)
    keep_file(trace, name, version, write, later=True)


def keep_file(
    trace: Trace, name: str, version: str, write: Callable[[Path], None], *, later: bool = False
) -> None:
    """:func:`write_kept` of a file ``write(path)`` writes, in any format (census keeps
    JSON: :mod:`tracelens.census_kept`). ``later``: on the writing thread
    (:mod:`tracelens.keep_writer`), for a ``write`` that reads nothing that may change."""
    from . import keep_writer
    from .cache import add_derived

    if _entry(trace) is None:
        return
    lazy, source = trace._lazy, trace._source_file

    def add() -> None:
        with contextlib.suppress(OSError):
            add_derived(lazy.settings, lazy.ident, source, name, version, write)

    if later:
        keep_writer.submit(add)
    else:
        add()


# -- the whole trace's accounting -----------------------------------------------------------
#: The kept accounting is a bundle (:func:`write_bundle`): a file per table of
#: :class:`tracelens.util.Util`, and its figures (window, notes, the API calls' count and
#: span, the records the read kept).
_KEPT_KINDS = ("kernel", "memcpy", "memset")


def code_version() -> str:
    """The version of the kept accounting (and the steps, :mod:`tracelens.steps_kept`):
    :func:`tracelens._resources.code_digest`."""
    from ._resources import code_digest

    return code_digest()


def bundle_name(prefix: str, part: str) -> str:
    """The file name of ``part`` of the kept bundle ``prefix`` at this version."""
    return f"{prefix}_{part}-{code_version()}.parquet"


def read_bundle(
    trace: Trace, prefix: str, parts: tuple[str, ...], flagged: dict[str, str] | None = None
) -> tuple[dict, dict[str, pl.DataFrame | None]] | None:
    """A bundle :func:`write_bundle` kept: its figures' one row and its ``parts`` (a part
    named in ``flagged`` is read only when the figures' boolean column it maps to says it
    was written; else it is None); None when the figures or a part are not there (never
    kept, another version, removed or damaged meanwhile)."""
    flagged = flagged or {}
    version = code_version()
    # the figures are written last: without them the parts may be partial
    figures = read_kept(trace, bundle_name(prefix, "figures"), version)
    if figures is None:
        return None
    row = figures.row(0, named=True)
    tables: dict[str, pl.DataFrame | None] = {}
    for part in parts:
        if part in flagged and not row[flagged[part]]:
            tables[part] = None
            continue
        tables[part] = read_kept(trace, bundle_name(prefix, part), version)
        if tables[part] is None:
            return None
    return row, tables


def write_bundle(
    trace: Trace, prefix: str, parts: dict[str, pl.DataFrame | None], figures: pl.DataFrame
) -> None:
    """Keep ``parts`` (None: not written) and then the one-row ``figures`` as the bundle
    ``prefix`` of the trace's cache entry: a reader trusts the parts only once the figures
    are there (:func:`read_bundle`)."""
    version = code_version()
    for part, table in parts.items():
        if table is not None:
            write_kept(trace, bundle_name(prefix, part), version, table)
    write_kept(trace, bundle_name(prefix, "figures"), version, figures)


_ACCOUNTING = "tracelens_util_accounting"


def kept_accounting(trace: Trace) -> tuple[Util, dict[str, int | None] | None] | None:
    """The whole trace's ``util.accounting_and_calls`` when an earlier run kept it in the
    trace's cache entry; else None. Tells the trace the records that run's read kept
    (:meth:`~tracelens.Trace.kept_whole`), as reading the work would have."""
    from .util import Util

    # message sizes exist only when the trace has NCCL payloads
    parts = ("frame", "idle_causes", "communication", "message_sizes")
    kept = read_bundle(trace, _ACCOUNTING, parts, {"message_sizes": "has_sizes"})
    if kept is None:
        return None
    row, tables = kept
    sizes = tables.pop("message_sizes")
    util = Util(
        **tables,
        start_ns=row["start_ns"],
        end_ns=row["end_ns"],
        notes=tuple(row["notes"]),
        message_sizes=sizes,
    )
    trace.kept_whole({k: row[f"kept_{k}"] for k in _KEPT_KINDS if row[f"kept_{k}"] is not None})
    calls = None
    if row["has_calls"]:
        calls = {k: row[k] for k in ("runtime_calls", "first_ns", "last_ns")}
    return util, calls


def keep_accounting(
    trace: Trace,
    util: Util,
    calls: dict[str, int | None] | None,
    kept_records: dict[str, int],
) -> None:
    """Keep the whole trace's accounting (``util``, the figures of its API calls ``calls``
    and the records of each kind its read kept) in the trace's cache entry for later runs;
    nothing when the trace reads no cache entry."""
    import polars as pl

    if _entry(trace) is None:
        return
    parts = {"frame": util.frame, "idle_causes": util.idle_causes}
    parts |= {"communication": util.communication, "message_sizes": util.message_sizes}
    calls = calls or {}
    figures = {
        "start_ns": [util.start_ns],
        "end_ns": [util.end_ns],
        "notes": [list(util.notes)],
        "has_sizes": [util.message_sizes is not None],
        "has_calls": [bool(calls)],
        **{k: [calls.get(k)] for k in ("runtime_calls", "first_ns", "last_ns")},
        **{f"kept_{k}": [kept_records.get(k)] for k in _KEPT_KINDS},
    }
    schema = {"notes": pl.List(pl.String), "has_sizes": pl.Boolean, "has_calls": pl.Boolean}
    frame = pl.DataFrame(figures, schema_overrides=schema)
    frame = frame.with_columns(pl.exclude(list(schema)).cast(pl.Int64))
    write_bundle(trace, _ACCOUNTING, parts, frame)
