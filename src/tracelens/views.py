"""The text of each command's result: title, caption and tables in the chosen format.

Pure functions (result in, string out) that the command line calls after the analysis, and
a notebook can call too. ``width`` and ``color`` describe the terminal a table is for
(:func:`tracelens.render.table`); nothing here looks at the terminal itself. Timeline and
stakeout keep their views next to their results (``timeline.render``, ``stakeout_text.render``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from . import render
from .render import DEFAULT_WIDTH

if TYPE_CHECKING:
    import polars as pl

    from .kernelnames import KernelName
    from .rows import Rows
    from .trace import TraceInfo

MACHINE_FORMATS = ("csv", "json")
DANGER_NONE_FOUND = "no danger-zone kernels found\n"
NO_UNCLASSIFIED = "no unclassified kernels: every kernel matched a category rule\n"


def plural(n: int, noun: str, plural_form: str | None = None) -> str:
    """``1 kernel``, ``2 kernels``, ``1,949 launches`` (``plural_form`` when not noun+s)."""
    return f"{n:,} {noun if n == 1 else plural_form or noun + 's'}"


def census(
    rows: Rows,
    *,
    fmt: str,
    timeunit: str = "ns",
    source: str,
    top: int | None = None,
    width: int = DEFAULT_WIDTH,
    color: bool = False,
) -> str:
    """``tracelens census``: the kernel summary with its title and caption."""
    title = f"census of {source}: GPU time by kernel"
    shown = plural(rows.height, "kernel row") + (f" (top {top})" if top else "")
    return render.frame(
        rows, fmt=fmt, timeunit=timeunit, title=title, caption=shown, width=width, color=color
    )


def memory(
    df: pl.DataFrame,
    *,
    by: str,
    fmt: str,
    timeunit: str = "ns",
    source: str,
    width: int = DEFAULT_WIDTH,
    color: bool = False,
) -> str:
    """``tracelens memory``: GPU time (``by="time"``) or bytes per memory operation."""
    title = f"memory of {source}: " + (
        "GPU time by operation" if by == "time" else "bytes by operation (MB = 10^6 bytes)"
    )
    caption = plural(df.height, "operation")
    return render.frame(
        df, fmt=fmt, timeunit=timeunit, title=title, caption=caption, width=width, color=color
    )


def lineup(
    df: pl.DataFrame,
    *,
    fmt: str,
    timeunit: str = "ns",
    source: str,
    by: str | None = None,
    top: int | None = None,
    width: int = DEFAULT_WIDTH,
    color: bool = False,
) -> str:
    """``tracelens lineup``: categories with their subfamily rows (``category_summary``)."""
    import polars as pl

    from .lineup import by_columns, shown_streams

    df = shown_streams(df, by)
    title = f"lineup of {source}: GPU time by category"
    cats = df.filter(pl.col("subfamily").is_null())
    caption = plural(cats.height, "category row")
    if by and cats.height:
        groups = cats.select(by_columns(df, by)).n_unique()
        caption += f" over {plural(groups, by)}"
    if top:
        # Only some categories are shown: their sum is not the whole.
        caption += f" (top {top}); Time (%) = share of all GPU time"
    else:
        total = render.format_time(int(cats["total_ns"].sum()), timeunit)
        caption += f"; Time (%) = share of {total} of GPU time"
    caption += " (kernels + memcpy + memset)"
    if fmt in ("table", "markdown"):
        # A breakdown row reads as the subfamily under its category.
        part = pl.col("subfamily").is_not_null()
        df = df.with_columns(
            category=pl.when(part).then(pl.lit("")).otherwise(pl.col("category")),
            subfamily=pl.col("subfamily").fill_null(""),
        )
    return render.frame(
        df, fmt=fmt, timeunit=timeunit, title=title, caption=caption, width=width, color=color
    )


def unclassified(
    full: pl.DataFrame,
    *,
    fmt: str,
    timeunit: str = "ns",
    source: str,
    by: str | None = None,
    top: int | None = None,
    width: int = DEFAULT_WIDTH,
    color: bool = False,
) -> str:
    """``tracelens lineup --show-other``: the kernel names no category rule matched
    (``unclassified_kernels``, all of them: the first ``top`` per ``by`` value are shown
    and the caption says how many there are in all)."""
    import polars as pl

    from .lineup import by_columns, shown_streams

    if full.is_empty() and fmt in ("table", "markdown"):
        return NO_UNCLASSIFIED
    df = full = shown_streams(full, by)
    if top:  # None or 0: every name
        rank = pl.int_range(pl.len())
        df = full.filter((rank.over(by_columns(full, by)) if by else rank) < top)
    title = f"lineup of {source}: kernels no category rule matched"
    names = full["name"].n_unique()
    caption = f"{plural(names, 'kernel name')} matched no rule"
    if df.height < full.height:
        caption += f" (the first {top:,}{f' per {by}' if by else ''} shown)"
    caption += "; add rules for them with --rules FILE"
    return render.frame(
        df, fmt=fmt, timeunit=timeunit, title=title, caption=caption, width=width, color=color
    )


def danger(
    full: pl.DataFrame,
    *,
    fmt: str,
    timeunit: str = "ns",
    source: str,
    top: int | None = None,
    width: int = DEFAULT_WIDTH,
    color: bool = False,
) -> str:
    """``tracelens danger``: the findings (``danger_kernels``; the first ``top`` rows) and,
    for table and markdown, a legend saying once what each rule that fired means."""
    import polars as pl

    df = full.head(top) if top else full
    tty = {"width": width, "color": color}
    if fmt in MACHINE_FORMATS:
        return render.frame(df, fmt=fmt, timeunit=timeunit)
    if full.is_empty():
        return DANGER_NONE_FOUND
    by_level = dict(full.group_by("level").agg(pl.col("name").n_unique()).rows())
    levels = ", ".join(
        f"{by_level[lv]} {lv}" for lv in ("high", "medium", "info") if lv in by_level
    )
    shown = f" (first {df.height} shown)" if df.height < full.height else ""
    caption = (
        f"{plural(full.height, 'finding')} on {plural(full['name'].n_unique(), 'kernel')} "
        f"({levels}){shown}; Time (%) = share of all kernel GPU time, as census"
    )
    kernels = df.select(
        "level", pl.col("rule_id").alias("rule"), "time_pct", "total_ns", "instances", "name"
    )
    legend_cols = ["level", pl.col("rule_id").alias("rule"), "why", "fix"]
    if fmt == "markdown":
        legend_cols.append("source")
    legend = df.unique("rule_id", keep="first", maintain_order=True).select(legend_cols)
    title = f"danger zone of {source}: determinism and batch-invariance risks"
    first = render.frame(kernels, fmt=fmt, timeunit=timeunit, title=title, caption=caption, **tty)
    second = render.frame(
        legend, fmt=fmt, timeunit=timeunit, title="what the rules mean and what to do", **tty
    )
    if fmt == "markdown":
        return first + "\n" + caption + "\n\n" + second
    return first + "\n" + second


def decoded_kernels(
    df: pl.DataFrame,
    *,
    fmt: str,
    timeunit: str = "ns",
    source: str,
    top: int | None = None,
    width: int = DEFAULT_WIDTH,
    color: bool = False,
) -> str:
    """``tracelens decode --trace``: every kernel of a trace, decoded (``decoded_kernels``;
    the ``fields`` column only in json, where it is complete)."""
    if fmt != "json":
        df = df.drop("fields")
    title = f"decode of {source}: every kernel by GPU time"
    shown = plural(df.height, "kernel row") + (f" (top {top})" if top else "")
    caption = f"{shown}; '?' marks a field whose meaning is unknown"
    return render.frame(
        df, fmt=fmt, timeunit=timeunit, title=title, caption=caption, width=width, color=color
    )


def decoded_names(
    decoded: list[KernelName],
    *,
    fmt: str,
    timeunit: str = "ns",
    width: int = DEFAULT_WIDTH,
    color: bool = False,
) -> str:
    """``tracelens decode NAME...``: each name, what it is and its fields (csv: one row per
    field; a name without fields still has its row)."""
    import polars as pl

    if fmt == "json":
        return json.dumps([k.to_dict() for k in decoded], ensure_ascii=False) + "\n"
    if fmt == "csv":
        cols = ("name", "family", "category", "subfamily", "field", "value", "meaning")
        cols += ("confidence",)
        rows = []
        for k in decoded:
            head = (k.raw, k.family, k.category, k.subfamily)
            fields = [(f.name, f.value, f.meaning, f.confidence) for f in k.fields]
            rows += [head + f for f in fields] or [head + (None,) * 4]
        df = pl.DataFrame(rows, schema={col: pl.String for col in cols}, orient="row")
        return render.frame(df, fmt="csv")
    parts = []
    for k in decoded:
        if fmt == "markdown":
            text = "\n\n".join([f"**{render.md_code(k.raw)}**", *_about(k, markdown=True)])
            text += "\n"
            if k.fields:
                text += "\n" + render.frame(_fields_frame(k), fmt="markdown")
        else:
            text = "\n".join([k.raw, *_about(k)]) + "\n"
            if k.fields:
                text += render.frame(_fields_frame(k), fmt="table", width=width, color=color)
        parts.append(text.rstrip("\n"))
    return "\n\n".join(parts) + "\n"


def _fields_frame(k: KernelName) -> pl.DataFrame:
    import polars as pl

    schema = {c: pl.String for c in ("field", "value", "meaning", "confidence")}
    rows = [(f.name, f.value, f.meaning, f.confidence) for f in k.fields]
    return pl.DataFrame(rows, schema=schema, orient="row")


def _about(k: KernelName, markdown: bool = False) -> list[str]:
    """Lines saying what the name is, before its fields (``markdown``: the name is a code
    span; the names are untrusted text)."""
    cat = k.category + (f" / {k.subfamily}" if k.subfamily else "")
    lines = [f"family {k.family}; category {cat}" + (f" (rule {k.rule_id})" if k.rule_id else "")]
    if k.normalized != k.raw:
        lines.append(f"normalized: {render.md_code(k.normalized) if markdown else k.normalized}")
    if not k.fields:
        lines.append("no fields: no decoder recognises this name")
    return lines


def info(meta: TraceInfo, *, fmt: str, **_terminal: object) -> str:
    """``tracelens info``: the export described as text (``table``), a ``markdown`` table
    of the same lines, or ``json``."""
    if fmt == "json":
        return json.dumps(meta.to_dict(), indent=2) + "\n"
    if fmt == "markdown":
        from .info_text import info_markdown

        return info_markdown(meta)
    return render.describe_info(meta)
