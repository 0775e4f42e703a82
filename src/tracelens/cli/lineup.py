"""tracelens lineup: GPU time by kernel category."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from . import _common as c
from . import app
from ._notes import with_note

if TYPE_CHECKING:
    import polars as pl


@app.command()
def lineup(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            help="Repeat the line-up per device, stream or pid (adds that column)",
            metavar="device|stream|pid",
        ),
    ] = None,
    subfamily: Annotated[
        bool | None,
        typer.Option(
            "--subfamily/--no-subfamily",
            help="Break every category down by subfamily (default: only gemm, by library, "
            "and memory, by copy kind; --no-subfamily: categories only)",
            show_default=False,
        ),
    ] = None,
    show_other: Annotated[
        bool,
        typer.Option(
            "--show-other",
            help="List the kernels no rule matched (category other), by time, with the "
            "demangled and base names rules match on",
        ),
    ] = False,
    rules: Annotated[
        Path | None,
        typer.Option(
            "--rules",
            help="TOML file of extra category rules, tried before the built-in ones "
            "(same format as tracelens/data/categories.toml; a rule with a built-in id "
            "replaces it)",
            metavar="FILE",
        ),
    ] = None,
    name: Annotated[
        str,
        typer.Option(
            "--name",
            help="How to print the top kernels: short, demangled or mangled (categories are "
            "always decided on the demangled name)",
            metavar="KIND",
        ),
    ] = "short",
    top: Annotated[
        int | None,
        typer.Option("--top", "-n", help="Only the N largest categories (names with --show-other)"),
    ] = None,
    device: c.DeviceOpt = None,
    pid: c.PidOpt = None,
    stream: c.StreamOpt = None,
    start: c.StartOpt = None,
    end: c.EndOpt = None,
    timeunit: c.TimeUnitOpt = "ns",
    fmt: c.FormatOpt = "table",
    output: c.OutputOpt = None,
) -> None:
    """GPU time by kernel category (gemm, attention, elementwise, ..., other), with calls,
    average and the top kernel of each; memcpys (one row per copy kind) and memsets are rows
    of the memory category.

    Time (%) is a row's share of the GPU time of everything that passes the filters: the
    summed durations of all kernels, memcpys and memsets (overlapping work counts once per
    event, so this can exceed the wall-clock busy time). Category rows add up to 100%;
    subfamily rows break their category down and repeat its time (in csv/json, category
    rows have an empty subfamily).
    """
    from ..categories import load_rules
    from ..census import check_name_kind
    from ..lineup import category_summary, check_by, unclassified_kernels

    c.check_choice("--format", fmt, c.FORMATS)
    c.check_choice("--timeunit", timeunit, c.TIME_UNITS)
    check_by(by)
    check_name_kind(name)
    ruleset = load_rules(rules)
    where = c.event_filter(device, pid, stream, start, end)
    opts = {"by": by, "rules": ruleset, "where": where, "top": top}
    with c.open_trace(trace, demo) as tr:
        if show_other:
            df = unclassified_kernels(tr, **opts)
        else:
            df = category_summary(tr, subfamily=subfamily, name=name, **opts)
        file = tr.path.name
        note = tr.graph_note(where)
    if show_other:
        text = _other_text(df, fmt, timeunit, file)
    else:
        text = _lineup_text(df, fmt, timeunit, file, by, top)
    c.emit(with_note(text, note, fmt), output)


def _lineup_text(
    df: pl.DataFrame, fmt: str, timeunit: str, file: str, by: str | None, top: int | None
) -> str:
    import polars as pl

    from ..render import convert_times

    title = f"lineup of {file}: GPU time by category"
    cats = df.filter(pl.col("subfamily").is_null())
    caption = f"{cats.height} category rows"
    if by and cats.height:
        groups = cats[by].n_unique()
        caption += f" over {groups} {by}" + ("" if groups == 1 else "s")
    if top:
        # Only some categories are shown: their sum is not the whole.
        caption += f" (top {top}); Time (%) = share of all GPU time"
    else:
        total = convert_times(cats.select(pl.col("total_ns").sum()), timeunit).item()
        caption += f"; Time (%) = share of {total:,} {timeunit} of GPU time"
    caption += " (kernels + memcpy + memset)"
    if fmt in ("table", "markdown"):
        # A breakdown row reads as the subfamily under its category.
        part = pl.col("subfamily").is_not_null()
        df = df.with_columns(
            category=pl.when(part).then(pl.lit("")).otherwise(pl.col("category")),
            subfamily=pl.col("subfamily").fill_null(""),
        )
    return c.render_frame(df, fmt, timeunit, title=title, caption=caption)


def _other_text(df: pl.DataFrame, fmt: str, timeunit: str, file: str) -> str:
    if df.is_empty() and fmt in ("table", "markdown"):
        return "no unclassified kernels: every kernel matched a category rule\n"
    title = f"lineup of {file}: kernels no category rule matched"
    caption = f"{df.height} kernel names matched no rule; add rules for them with --rules FILE"
    return c.render_frame(df, fmt, timeunit, title=title, caption=caption)
