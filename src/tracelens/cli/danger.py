"""tracelens danger: kernels that are determinism or batch-invariance risks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import UsageError
from . import _common as c
from . import app
from ._notes import with_note

if TYPE_CHECKING:
    import polars as pl

NONE_FOUND = "no danger-zone kernels found\n"


@app.command()
def danger(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    rules: Annotated[
        Path | None,
        typer.Option(
            "--rules",
            help="TOML file of extra danger rules, tried before the built-in ones (same "
            "format as tracelens/data/danger.toml; a rule with a built-in id replaces it)",
            metavar="FILE",
        ),
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on",
            help="For CI: exit 1, after printing, when a kernel at this level or a more severe "
            "one is present (high > medium > info)",
            metavar="LEVEL",
        ),
    ] = None,
    top: c.TopOpt = None,
    device: c.DeviceOpt = None,
    pid: c.PidOpt = None,
    stream: c.StreamOpt = None,
    start: c.StartOpt = None,
    end: c.EndOpt = None,
    timeunit: c.TimeUnitOpt = "ns",
    fmt: c.FormatOpt = "table",
    output: c.OutputOpt = None,
) -> None:
    """Kernels whose results may change between runs (nondeterminism) or with the batch size
    (no batch invariance): each with the rule that fired, its level (high, medium, info),
    its share of kernel GPU time (as census), its launches, why, what to do and the rule's
    source (json, csv, markdown).

    Levels: high = the summation order is known to vary (atomics, split-K, split-KV /
    cascade merges); medium = the kernel or algorithm is chosen by shape, so another batch
    size may run a different one; info = worth knowing, rarely the cause. Prints exactly
    'no danger-zone kernels found' when no rule fires (csv/json: an empty result).
    """
    from ..danger import check_level, danger_kernels, kernels_at_or_above, load_danger_rules

    c.check_choice("--format", fmt, c.FORMATS)
    c.check_choice("--timeunit", timeunit, c.TIME_UNITS)
    if fail_on is not None:
        check_level(fail_on)
    if top is not None and top < 1:
        raise UsageError(f"--top must be at least 1 (got {top})")
    ruleset = load_danger_rules(rules)
    where = c.event_filter(device, pid, stream, start, end)
    with c.open_trace(trace, demo) as tr:
        df = danger_kernels(tr, rules=ruleset, where=where)
        file = tr.path.name
        note = tr.graph_note(where)
    text = _text(df.head(top) if top else df, fmt, timeunit, file, df)
    c.emit(with_note(text, note, fmt), output)
    failing = kernels_at_or_above(df, fail_on) if fail_on else 0
    if failing:
        print(
            f"tracelens: danger: {_count(failing, 'kernel')} at level {fail_on} or above",
            file=sys.stderr,
        )
        raise typer.Exit(1)


def _text(df: pl.DataFrame, fmt: str, timeunit: str, file: str, full: pl.DataFrame) -> str:
    import polars as pl

    if fmt in ("csv", "json"):
        return c.render_frame(df, fmt, timeunit)
    if full.is_empty():
        return NONE_FOUND
    counts = full.group_by("level").agg(pl.col("name").n_unique()).rows()
    by_level = dict(counts)
    levels = ", ".join(
        f"{by_level[lv]} {lv}" for lv in ("high", "medium", "info") if lv in by_level
    )
    shown = f" (first {df.height} shown)" if df.height < full.height else ""
    caption = (
        f"{_count(full.height, 'finding')} on {_count(full['name'].n_unique(), 'kernel')} "
        f"({levels}){shown}; Time (%) = share of all kernel GPU time, as census"
    )
    kernels = df.select(
        "level", pl.col("rule_id").alias("rule"), "time_pct", "total_ns", "instances", "name"
    )
    legend_cols = ["level", pl.col("rule_id").alias("rule"), "why", "fix"]
    if fmt == "markdown":
        legend_cols.append("source")
    legend = df.unique("rule_id", keep="first", maintain_order=True).select(legend_cols)
    title = f"danger zone of {file}: determinism and batch-invariance risks"
    first = c.render_frame(kernels, fmt, timeunit, title=title, caption=caption)
    second = c.render_frame(legend, fmt, timeunit, title="what the rules mean and what to do")
    if fmt == "markdown":
        return first + "\n" + caption + "\n\n" + second
    return first + "\n" + second


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
