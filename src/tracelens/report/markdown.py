"""The Markdown summary, for CI job summaries and PR comments: the diff's Markdown for two
traces; header, time by category, top kernels and danger-zone kernels for one. Tables go
through render.markdown, the Markdown writer of every command; other text from the trace
(kernel, GPU, process and file names) through render.md_text / md_code, its escaping."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import MissingDataError
from ..units import fmt_ns
from . import svg
from .dangerview import danger_rows
from .header import event_count
from .kernelview import category_rows, kernel_rows
from .page import check_top
from .text import pct, share_pct, short

if TYPE_CHECKING:
    from ..filters import EventFilter
    from ..trace import Trace
    from .selection import Selection

DEFAULT_TOP = 10  # rows per table
_NO_KERNELS = "_No CUDA kernels in this export: nothing to summarize._"
# A selection whose GPU work holds no kernel (the page's census says it too)
NO_KERNEL_SHOWN = "No kernel in the work shown: it is copies and memsets only (memory, above)"


def build_markdown(
    trace_a: Trace,
    trace_b: Trace | None = None,
    *,
    top: int = DEFAULT_TOP,
    name: str = "demangled",
    where_a: EventFilter | None = None,
    where_b: EventFilter | None = None,
    selected: tuple[str | None, str | None] = (None, None),
) -> str:
    """A compact Markdown summary: the diff's (evidence board first) for two traces; header,
    time by category, top kernels and danger-zone kernels for one. ``where_a``,
    ``where_b``, ``selected``: as :func:`.page.build_report`'s."""
    from .selection import Selection, said

    top = check_top(top)
    chosen = [Selection.of(w, n) for w, n in zip((where_a, where_b), selected, strict=True)]
    if trace_b is not None:
        from ..compare import diff as compute
        from ..compare.render import markdown
        from .nodiff import without_kernels

        if notes := without_kernels(trace_a, trace_b):
            return _pair_without_diff(
                trace_a, trace_b, notes, top=top, name_kind=name, chosen=chosen
            )
        d = compute(
            trace_a, trace_b, name=name, where_a=chosen[0].where, where_b=chosen[1].where,
            selected=said(chosen),
        )  # fmt: skip
        # exit 3 for a side selecting no GPU work, as the page of the pair does
        for t, c, read in zip((trace_a, trace_b), chosen, d.sides, strict=True):
            c.require_work(t, _operations(read))
        return markdown(d, top=top)
    return _single(trace_a, top=top, name_kind=name, chosen=chosen[0])


def _operations(read) -> int:
    """The GPU operations the diff read of one side (:class:`tracelens.compare.collect.Side`
    of its selection): kernels, copies, memsets and graph replays."""
    kinds = ("kernel_launches", "memcpy_count", "memset_count")
    return sum(read.totals[k] for k in kinds) + read.graph[0]


def _pair_without_diff(
    trace_a: Trace,
    trace_b: Trace,
    notes: list[str],
    *,
    top: int,
    name_kind: str,
    chosen: list[Selection],
) -> str:
    """Two traces, either without kernels (``notes``: :func:`.nodiff.without_kernels`): no
    diff (it compares kernels), that said plainly, then each trace's summary."""
    from ..compare import side_labels
    from ..render import md_code, md_text
    from .nodiff import CANNOT_COMPARE

    label_a, label_b, _ = side_labels(trace_a.path, trace_b.path)
    out = [f"## tracelens report: {md_code(label_a)} → {md_code(label_b)}"]
    out += ["", *(f"_{md_text(n)}._" for n in notes), "", f"_{md_text(CANNOT_COMPARE)}._", ""]
    sides = [
        _single(t, top=top, name_kind=name_kind, chosen=c)
        for t, c in zip((trace_a, trace_b), chosen, strict=True)
    ]
    return "\n".join(out) + "\n" + "\n".join(sides)


def _table(columns: list[tuple[str, str]], rows: list[list[object]]) -> list[str]:
    """Table lines through :func:`tracelens.render.markdown`, the writer every command's
    Markdown uses: ``columns`` are (column name, kind) pairs, kind 'str', 'int' (with
    thousands separators) or 'num': a number already written as text ("1.2 ms", "45.0%"),
    right-aligned as render aligns numbers. Names in render's wide-text set ('kernel')
    become code spans, every other cell escaped text."""
    from ..render import markdown
    from ..rows import Rows

    names = tuple(c for c, _ in columns)
    # render.markdown right-aligns numeric columns and writes str values as they are
    kinds = tuple("float" if k == "num" else k for _, k in columns)
    return markdown(Rows(names, kinds, tuple(tuple(r) for r in rows))).rstrip("\n").split("\n")


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
        f"{md_text(gpus)} · span {fmt_ns(info.duration_ns)} · "
        f"{event_count(info, 'kernel', 'kernels')}, {event_count(info, 'memcpy', 'memcpys')}, "
        f"{event_count(info, 'memset', 'memsets')}, "
        f"{event_count(info, 'runtime', 'CUDA API calls')}"
    )


def _without_kernels(trace: Trace, chosen: Selection) -> list[str]:
    """The summary's lines after the header for a trace without kernels: with copies or
    memsets, why there are no kernels (:func:`.kernelview.no_kernels_reason`) and the
    memory operations' table (as the page's, of ``chosen``'s work); else that there is
    nothing to summarize."""
    from ..units import fmt_bytes
    from .collect import memory_rows
    from .kernelview import no_kernels_reason

    reason = no_kernels_reason(trace)
    if reason is None:
        return [_NO_KERNELS]
    rows = memory_rows(trace, chosen.where)
    chosen.require_work(trace, sum(m["count"] for m in rows))
    out = [f"_{reason}._", "", "### Memory operations", ""]
    columns = [("operation", "str"), ("count", "int"), ("time", "num"), ("share", "num")]
    columns += [("Avg", "num"), ("bytes", "num")]
    return out + _table(
        columns,
        [
            [m["operation"], m["count"], fmt_ns(m["total_ns"]), share_pct(m["time_pct"])]
            + [fmt_ns(m["avg_ns"]), fmt_bytes(m["bytes"])]
            for m in rows
        ],
    )


def _single(trace: Trace, *, top: int, name_kind: str, chosen: Selection) -> str:
    from ..render import md_code, md_text
    from .header import left_out_notes

    palette = svg.Palette()
    out = [f"## tracelens report: {md_code(trace.path.name)}", "", _header_line(trace), ""]
    if chosen.note:  # as the page's 'selected' row: every figure below is of that work
        out += [f"_Selected: {md_text(chosen.note)}._", ""]
    # as the page's 'not in this report' row: graph replays' GPU time is in no figure below
    notes = left_out_notes(trace, chosen.where)
    out += [line for note in notes for line in (f"_Note: {md_text(note)}._", "")]
    try:
        trace.require_kernels()
    except MissingDataError:
        return "\n".join([*out, *_without_kernels(trace, chosen), ""])
    if trace.info.count("kernel") == 0:
        return "\n".join([*out, _NO_KERNELS, ""])
    census = trace.census(name=name_kind, where=chosen.where)
    # categories include copies and memsets: a selection of those alone still has rows;
    # graph replays traced at graph level are in none, but are GPU work (as on the page)
    cats = category_rows(trace, palette, name_kind, subfamily=False, where=chosen.where)
    replays = trace.graph_replays(chosen.where)[0] if not chosen.whole else 0
    chosen.require_work(trace, sum(c.calls for c in cats) + replays)
    total = int(census["total_ns"].sum())
    out += [f"Kernel time {fmt_ns(total)} in {census.height:,} distinct kernels.", ""]
    # The numbers of `tracelens lineup`: memcpy and memset time is in memory.
    gpu_time = sum(c.total_ns for c in cats)
    out += [
        "### Time by category",
        "",
        f"GPU time {fmt_ns(gpu_time)}, kernels + memcpy + memset (as `tracelens lineup`).",
        "",
    ]
    out += _table(
        [("category", "str"), ("share", "num"), ("time", "num"), ("calls", "int")],
        [[c.category, share_pct(c.time_pct), fmt_ns(c.total_ns), c.calls] for c in cats[:top]],
    )
    out += ["", "### Top kernels", ""]
    if census.is_empty():  # a selection of copies and memsets only
        out += [f"_{NO_KERNEL_SHOWN}._", ""]
        return "\n".join(out)
    kernel_columns = [("kernel", "str"), ("category", "str"), ("calls", "int")]
    kernel_columns += [("Total", "num"), ("Avg", "num"), ("share_of_kernel_time", "num")]
    out += _table(
        kernel_columns,
        [
            [short(k.name, 70), k.category, k.calls, fmt_ns(k.total_ns), fmt_ns(k.avg_ns)]
            + [pct(k.share)]
            for k in kernel_rows(census.head(top), palette, total)
        ],
    )
    if census.height > top:
        out.append(f"\n_{census.height - top:,} more kernels not shown._")
    danger, danger_total = danger_rows(census, top)
    if danger:
        out += ["", "### Danger-zone kernels", ""]
        danger_columns = [("risk", "str"), ("kernel", "str"), ("Rule", "str")]
        danger_columns += [("calls", "int"), ("time", "num"), ("Fix", "str")]
        out += _table(
            danger_columns,
            [
                [r["level"], short(r["name"], 60), r["rule_id"], r["calls"]]
                + [fmt_ns(r["total_ns"]), r["fix"]]
                for r in danger
            ],
        )
        if danger_total > len(danger):
            out.append(f"\n_{danger_total - len(danger):,} more danger-zone rows not shown._")
    out.append("")
    return "\n".join(out)
