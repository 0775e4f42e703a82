"""One trace's kernels and categories as the page shows them: rows of the census (top
kernels, decoded, with their danger-zone hits) and of the lineup, and their bar charts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from ..units import fmt_ns
from . import svg
from .omitted import Omitted
from .text import DecodedField, category_of, danger_hits, decode, labels, pct, share_pct, short

if TYPE_CHECKING:
    import polars as pl

    from ..filters import EventFilter
    from ..trace import Trace

CHART_ROWS = 12  # bars in a chart


@dataclass
class KernelRow:
    name: str
    short: str
    category: str
    color: str
    calls: int
    total_ns: int
    share: float
    avg_ns: float
    med_ns: float
    min_ns: int
    max_ns: int
    family: str | None
    fields: list[DecodedField]
    danger: list[Any]


@dataclass
class CategoryRow:
    """A row of ``tracelens lineup`` (:func:`tracelens.lineup.category_summary`): a category,
    or (``subfamily`` set) one part of its breakdown."""

    category: str
    subfamily: str | None
    color: str
    calls: int
    total_ns: int
    time_pct: float  # share of all GPU time (kernels + memcpy + memset), as lineup rounds it
    avg_ns: float
    top_kernel: str


def kernel_rows(census: pl.DataFrame, palette: svg.Palette, total: int) -> list[KernelRow]:
    rows = []
    label = labels(census["name"].to_list())
    for r in census.iter_rows(named=True):
        cat = category_of(r["name"])
        family, fields = decode(r["name"])
        rows.append(
            KernelRow(
                name=r["name"],
                short=label[r["name"]],
                category=cat,
                color=palette(cat),
                calls=r["instances"],
                total_ns=r["total_ns"],
                share=(r["total_ns"] / total) if total else 0.0,
                avg_ns=r["avg_ns"],
                med_ns=r["med_ns"],
                min_ns=r["min_ns"],
                max_ns=r["max_ns"],
                family=family,
                fields=fields,
                danger=danger_hits(r["name"]),
            )
        )
    return rows


def category_rows(
    trace: Trace,
    palette: svg.Palette,
    name_kind: str,
    *,
    subfamily: bool | None = None,
    activities: pl.DataFrame | None = None,
    where: EventFilter | None = None,
) -> list[CategoryRow]:
    """The trace's ``tracelens lineup``: the one source of its numbers, memcpy and memset
    time included (in ``memory``). ``subfamily``: as :func:`~tracelens.lineup.category_summary`
    (None breaks down gemm and memory); ``activities``: its input already read
    (:func:`.sharedread.lineup_activities`, of the whole trace); ``where``: the work it
    sums (None: all)."""
    from ..lineup import category_summary

    df = category_summary(
        trace, name=name_kind, subfamily=subfamily, activities=activities, where=where
    )
    return [
        CategoryRow(
            category=r["category"],
            subfamily=r["subfamily"],
            color=palette(r["category"]),
            calls=r["calls"],
            total_ns=r["total_ns"],
            time_pct=r["time_pct"],
            avg_ns=r["avg_ns"],
            top_kernel=short(r["top_kernel"], 70),
        )
        for r in df.iter_rows(named=True)
    ]


def kernels_left_out(census: pl.DataFrame, top: int, label: str, omitted: list[Omitted]):
    """Say how many kernels (and how much of the kernel time) the table leaves out."""
    if census.height <= top:
        return
    kernel_time = int(census["total_ns"].sum())
    rest = int(census.tail(census.height - top)["total_ns"].sum())
    omitted.append(
        Omitted(
            f"{label}: kernels",
            f"{census.height - top:,} more kernels ({fmt_ns(rest)}, "
            f"{pct(rest / kernel_time if kernel_time else 0)} "
            "of kernel time) are not listed; raise --top to see them",
        )
    )


def _kernel_bar(k: KernelRow, label: str) -> svg.Bar:
    tip = (
        f"{k.short}\n{k.category} · {k.calls:,} calls · {fmt_ns(k.total_ns)} "
        f"({pct(k.share)}) · avg {fmt_ns(k.avg_ns)}"
    )
    right = f"{fmt_ns(k.total_ns)} · {pct(k.share)}"
    return svg.Bar(label, k.total_ns, k.color, right=right, tip=tip, mono=True)


def _category_bar(c: CategoryRow) -> svg.Bar:
    share = share_pct(c.time_pct)
    tip = f"{c.category}: {c.calls:,} calls, {fmt_ns(c.total_ns)} ({share} of GPU time)"
    return svg.Bar(
        c.category, c.total_ns, c.color, right=f"{fmt_ns(c.total_ns)} · {share}", tip=tip
    )


def kernel_chart(kernels: list[KernelRow]) -> Markup:
    shown = kernels[:CHART_ROWS]
    label = labels([k.name for k in shown], svg.label_chars(300, mono=True))
    bars = [_kernel_bar(k, label[k.name]) for k in shown]
    return svg.hbars(bars, width=600, label_width=300, right_width=130)


def category_chart(categories: list[CategoryRow]) -> Markup:
    bars = [_category_bar(c) for c in categories if c.subfamily is None][:CHART_ROWS]
    return svg.hbars(bars, width=520, label_width=130, right_width=130)


def no_kernels_reason(trace: Trace) -> str | None:
    """Why the kernel sections of a trace with GPU memory work (copies, memsets) but no
    kernel are empty, in one sentence for each of them to show; None: the trace has
    kernels, or no CUDA GPU work at all (the page then says only that)."""
    why = no_kernels_why(trace)
    return None if why is None else f"No CUDA kernels in this trace: {why}"


def no_kernels_why(trace: Trace) -> str | None:
    """What a trace with GPU memory work but no kernel ran instead (nsys's graph-level
    reason, or its copies and memsets: 'CUDA was traced and only 3 memory copies ran');
    None as :func:`no_kernels_reason`."""
    from ..trace.core import MEMCPY_TABLE, MEMSET_TABLE
    from ..trace.info import graph_level_reason

    if trace.has_kernels():
        return None
    copies, sets = trace.table_rows(MEMCPY_TABLE), trace.table_rows(MEMSET_TABLE)
    if not (copies or sets):
        return None
    if replays := trace.graph_replays()[0]:
        return graph_level_reason(replays)
    held = " and ".join(
        f"{n:,} {one if n == 1 else many}"
        for n, one, many in ((copies, "memory copy", "memory copies"), (sets, "memset", "memsets"))
        if n
    )
    return f"CUDA was traced and only {held} ran"
