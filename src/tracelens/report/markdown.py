"""The Markdown summary, for CI job summaries and PR comments: the diff's Markdown for two
traces; header, time by category, top kernels and danger-zone kernels for one. Text from the
trace (kernel, GPU, process and file names) goes through render.md_text / md_code, the
escaping every Markdown writer of tracelens shares."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import MissingDataError
from ..units import fmt_ns
from . import svg
from .collect import category_rows, danger_rows, kernel_rows
from .page import check_top
from .text import count, pct, share_pct, short

if TYPE_CHECKING:
    from ..trace import Trace

DEFAULT_TOP = 10  # rows per table
_NO_KERNELS = "_No CUDA kernels in this export: nothing to summarize._"


def build_markdown(
    trace_a: Trace,
    trace_b: Trace | None = None,
    *,
    top: int = DEFAULT_TOP,
    name: str = "demangled",
) -> str:
    """A compact Markdown summary: the diff's (evidence board first) for two traces; header,
    time by category, top kernels and danger-zone kernels for one."""
    check_top(top)
    if trace_b is not None:
        from ..compare import diff as compute
        from ..compare.render import markdown

        return markdown(compute(trace_a, trace_b, name=name), top=top)
    return _single(trace_a, top=top, name_kind=name)


def _table(headers: list[str], aligns: str, rows: list[list[str]]) -> list[str]:
    """Table lines; cells are already Markdown (escaped with md_text / md_code).
    ``aligns``: one letter per column, l (left) or r (right)."""
    marks = {"l": ":---", "r": "---:"}
    lines = ["| " + " | ".join(headers) + " |"]
    lines.append("| " + " | ".join(marks[a] for a in aligns) + " |")
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return lines


def _header_line(trace: Trace) -> str:
    from ..render import md_text

    info = trace.info
    names: dict[str, int] = {}
    for g in info.gpus:
        names[g.name or "unknown GPU"] = names.get(g.name or "unknown GPU", 0) + 1
    gpus = ", ".join((f"{n} × " if n > 1 else "") + k for k, n in names.items()) or "no GPU"
    return (
        f"nsys {md_text(info.nsys_version or 'unknown')}, "
        f"schema {md_text(info.schema_version or '—')} · "
        f"{md_text(gpus)} · span {fmt_ns(info.duration_ns)} · {info.count('kernel'):,} kernels, "
        f"{info.count('memcpy'):,} memcpys, {info.count('memset'):,} memsets, "
        f"{info.count('runtime'):,} CUDA API calls"
    )


def _single(trace: Trace, *, top: int, name_kind: str) -> str:
    from ..render import md_code, md_text

    palette = svg.Palette()
    out = [f"## tracelens report: {md_code(trace.path.name)}", "", _header_line(trace), ""]
    try:
        trace.require_kernels()
    except MissingDataError:
        return "\n".join([*out, _NO_KERNELS, ""])
    if trace.info.count("kernel") == 0:
        return "\n".join([*out, _NO_KERNELS, ""])
    census = trace.census(name=name_kind)
    total = int(census["total_ns"].sum())
    out += [f"Kernel time {fmt_ns(total)} in {census.height:,} distinct kernels.", ""]
    # The numbers of `tracelens lineup`: memcpy and memset time is in memory.
    cats = category_rows(trace, palette, name_kind, subfamily=False)
    gpu_time = sum(c.total_ns for c in cats)
    out += [
        "### Time by category",
        "",
        f"GPU time {fmt_ns(gpu_time)}, kernels + memcpy + memset (as `tracelens lineup`).",
        "",
    ]
    out += _table(
        ["Category", "Share", "Time", "Calls"],
        "lrrr",
        [
            [md_text(c.category), share_pct(c.time_pct), fmt_ns(c.total_ns), f"{c.calls:,}"]
            for c in cats[:top]
        ],
    )
    out += ["", "### Top kernels", ""]
    out += _table(
        ["Kernel", "Category", "Calls", "Total", "Avg", "Share of kernel time"],
        "llrrrr",
        [
            [
                md_code(short(k.name, 70), table=True),
                md_text(k.category),
                f"{k.calls:,}",
                fmt_ns(k.total_ns),
                fmt_ns(k.avg_ns),
                pct(k.share),
            ]
            for k in kernel_rows(census.head(top), palette, total)
        ],
    )
    if census.height > top:
        out.append(f"\n_{census.height - top:,} more kernels not shown._")
    danger = danger_rows(census)
    if danger:
        out += ["", "### Danger-zone kernels", ""]
        out += _table(
            ["Risk", "Kernel", "Rule", "Calls", "Time", "Fix"],
            "lllrrl",
            [
                [
                    md_text(r["level"]),
                    md_code(short(r["name"], 60), table=True),
                    md_text(r["rule_id"]),
                    count(r["calls"]),
                    fmt_ns(r["total_ns"]),
                    md_text(r["fix"]),
                ]
                for r in danger[:top]
            ],
        )
    out.append("")
    return "\n".join(out)
