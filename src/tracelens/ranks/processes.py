"""Which processes of an export are ranks. An export of a single-node job profiled as one
report holds every rank's process, and maybe helpers that ran a few kernels (a data-loader
worker, a tokenizer, a profiler-side process): counted as ranks, a helper takes a rank
number (the ranks after it on the GPU order are renumbered) and a row of figures that says
nothing about the run. A rank communicates: when any process ran collectives, the ranks are
the processes that did; when none did, the processes whose kernel time is at least
``min_kernel_share`` of the busiest one's (``data/ranks.toml``, with the reason).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..escape import encodable
from .rules import ranks_rules

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class SetAside:
    """A process of an export that ran kernels but is not a rank, and why (words that
    follow its kernel count: 'no collective, while 2 other processes ran collectives')."""

    path: str
    pid: int
    kernels: int
    device: int
    reason: str


def split_ranks(path: str, processes: pl.DataFrame) -> tuple[pl.DataFrame, tuple[SetAside, ...]]:
    """(the rows of ``processes`` that are ranks, the others set aside with the reason).
    ``processes``: ``queries/ranks_processes.sql``'s rows (pid, first_device, rank_device,
    kernels, kernel_ns, collectives), in rank order."""
    import polars as pl

    talkers = processes.filter(pl.col("collectives") > 0)
    if talkers.height:
        n = talkers.height
        why = f"no collective, while {n} other process{'es' if n > 1 else ''} ran collectives"
        ranks = talkers
        reasons = {pid: why for pid in processes["pid"].to_list()}
    else:
        share = ranks_rules().min_kernel_share
        busiest = processes["kernel_ns"].max() or 0
        ranks = processes.filter(pl.col("kernel_ns") >= share * busiest)
        reasons = {
            pid: (
                f"{_percent(ns / busiest)} of the busiest process's kernel time, under "
                f"{_percent(share)}, and no process ran collectives"
            )
            for pid, ns in processes.select("pid", "kernel_ns").iter_rows()
            if busiest
        }
    aside = processes.filter(~pl.col("pid").is_in(ranks["pid"].to_list()))
    return ranks, tuple(
        SetAside(path, pid, kernels, device, reasons[pid])
        for pid, device, kernels in aside.select("pid", "first_device", "kernels").iter_rows()
    )


def set_aside_frame(set_aside: tuple[SetAside, ...]) -> pl.DataFrame:
    """The processes set aside as a table, by export and pid: path (the export), pid,
    kernels, device (the lowest CUDA device it ran kernels on), reason (the words that follow its
    kernel count in the finding); empty, with those columns, when none was."""
    import polars as pl

    schema = {
        "path": pl.String, "pid": pl.Int64, "kernels": pl.Int64, "device": pl.Int64,
        "reason": pl.String,
    }  # fmt: skip
    rows = [(encodable(a.path), a.pid, a.kernels, a.device, a.reason) for a in set_aside]
    return pl.DataFrame(rows, schema=schema, orient="row").sort("path", "pid")


def set_aside_finding(set_aside: tuple[SetAside, ...]) -> list[str]:
    """One line naming the processes set aside and why, or none."""
    if not set_aside:
        return []
    n = len(set_aside)
    what = "processes that ran kernels but are not ranks" if n > 1 else (
        "process that ran kernels but is not a rank"
    )  # fmt: skip
    each = "; ".join(
        f"pid {a.pid} in {Path(a.path).name} ({a.kernels:,} kernel{'s' if a.kernels != 1 else ''}"
        f" on GPU {a.device}: {a.reason})"
        for a in set_aside
    )
    return [f"set aside {n} {what}: {each}"]


def _percent(share: float) -> str:
    """0.0123 -> '1.2%'; a share too small for two decimals is '<0.01%'."""
    if 0 < share < 0.0001:
        return "<0.01%"
    return f"{share * 100:.2g}%" if share < 0.1 else f"{share * 100:.0f}%"
