"""Census: which kernels take the GPU time (``nsys stats`` cuda_gpu_kern_sum semantics)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .choices import NAME_KINDS
from .errors import check_at_least, check_choice
from .filters import EventFilter

if TYPE_CHECKING:
    import polars as pl

    from .rows import Rows
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
    max_ns, stddev_ns, [grid_xyz, block_xyz,] name. ``time_pct`` is the share of all kernel
    time that passes ``where``, so it does not change with ``top``.
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
    check_name_kind(name)
    check_at_least("top", top, 1)
    trace.require_kernels()
    where = where or EventFilter()
    rows = trace.query_rows(
        "kernel_summary", name_kind=name, by_launch_config=by_launch_config, **where.params()
    )
    if not by_launch_config:
        rows = rows.drop("grid_xyz", "block_xyz")
    return rows.head(top)
