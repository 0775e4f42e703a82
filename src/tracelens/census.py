"""Census: which kernels take the GPU time (``nsys stats`` cuda_gpu_kern_sum semantics)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import census_kept
from .choices import NAME_KINDS
from .errors import check_at_least, check_choice
from .filters import EventFilter
from .render import LAUNCH_DIMS

if TYPE_CHECKING:
    import polars as pl

    from .rows import Rows
    from .stepwork import StepSelection
    from .trace import Trace


def check_name_kind(name: str) -> str:
    return check_choice("name", name, NAME_KINDS)


def kernel_summary(
    trace: Trace,
    *,
    name: str = "demangled",
    by_launch_config: bool = False,
    top: int | None = None,
    where: EventFilter | None = None,
) -> pl.DataFrame:
    """One row per kernel (per kernel and launch configuration with ``by_launch_config``).

    Columns, all times in ns: time_pct, total_ns, instances, avg_ns, med_ns, min_ns,
    max_ns, stddev_ns, [grid_x, grid_y, grid_z, block_x, block_y, block_z,] name (the
    launch configuration as integers; tables print it as nsys's GridXYZ/BlockXYZ). ``time_pct`` is the share of all kernel
    time that passes ``where``, so it does not change with ``top`` (the first rows; None or 0:
    every row).
    """
    rows = kernel_summary_rows(
        trace, name=name, by_launch_config=by_launch_config, top=top, where=where
    )
    return rows.to_polars()


def kernel_summary_rows(
    trace: Trace,
    *,
    name: str = "demangled",
    by_launch_config: bool = False,
    top: int | None = None,
    where: EventFilter | None = None,
) -> Rows:
    """``kernel_summary`` as plain rows, for the command line (no polars/pyarrow import)."""
    return _all_rows(trace, name, by_launch_config, where).head(_top(top))


def census_rows(
    trace: Trace,
    *,
    name: str = "demangled",
    by_launch_config: bool = False,
    top: int | None = None,
    where: EventFilter | None = None,
) -> tuple[Rows, str | None]:
    """``kernel_summary_rows`` and the note on the kernel records left out as damaged
    (:meth:`~tracelens.Trace.damage_note`; None when there are none)."""
    top = _top(top)
    rows = _all_rows(trace, name, by_launch_config, where)
    return rows.head(top), trace.damage_note(("kernel",))


def _top(top: int | None) -> int | None:
    """``top`` checked: None or 0 (every row, as timeline's ``limit``) give None."""
    return check_at_least("top", top, 0, meaning="every row") or None


def _all_rows(trace: Trace, name: str, by_launch_config: bool, where: EventFilter | None) -> Rows:
    check_name_kind(name)
    trace.require_kernels()
    where = where or EventFilter()
    whole = where.is_whole()
    # the whole trace's rows, kept in its cache entry by an earlier run (census_kept)
    rows = census_kept.read(trace, name, by_launch_config) if whole else None
    if rows is None:
        rows = trace.query_rows(
            "kernel_summary", name_kind=name, by_launch_config=by_launch_config, **where.params()
        )
        if whole:
            census_kept.write(trace, name, by_launch_config, rows)
    if whole:  # every kept kernel: spares the damage count a second scan
        at = rows.columns.index("instances")
        trace.kept_whole({"kernel": sum(row[at] for row in rows.data)})
    return rows if by_launch_config else rows.drop(*LAUNCH_DIMS)


def kernel_summary_per_step_rows(
    trace: Trace,
    steps: str | int | tuple[int, int] | None = None,
    where: EventFilter | None = None,
    **options: Any,
) -> tuple[Rows, StepSelection]:
    """The kernel summary (``options``: name, by_launch_config, top) of the work of some
    steps, per step: ``total_ns`` and ``instances`` divided by the number of steps that hold
    work (``per_step_ns``, ``calls_per_step``); the other columns are per call, unchanged.
    ``steps``: ``"A:B"`` (see :func:`tracelens.steps.select_steps`); None: the steady
    state, from the first step after the warm-up to the last. Returns the rows and the
    selection (how many steps, found how: :meth:`~tracelens.steps.StepSelection.note`)."""
    from .stepwork import select_steps

    chosen = select_steps(trace, steps, where)
    rows = kernel_summary_rows(trace, **options, where=chosen.where)
    return per_step(rows, chosen.selected), chosen


def per_step(rows: Rows, steps: int) -> Rows:
    """``rows`` of a kernel summary with ``total_ns`` and ``instances`` divided by
    ``steps`` and renamed ``per_step_ns`` and ``calls_per_step``."""
    from .rows import Rows

    renamed = {"total_ns": "per_step_ns", "instances": "calls_per_step"}
    scaled = [i for i, c in enumerate(rows.columns) if c in renamed]
    return Rows(
        tuple(renamed.get(c, c) for c in rows.columns),
        tuple("float" if i in scaled else k for i, k in enumerate(rows.kinds)),
        tuple(
            tuple(v / steps if i in scaled else v for i, v in enumerate(row)) for row in rows.data
        ),
    )
