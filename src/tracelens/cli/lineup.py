"""tracelens lineup: GPU time by kernel category."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..choices import LINEUP_BY, NAME_KINDS
from . import _common as c
from ._app import app
from ._notes import join_notes

ByOpt = Annotated[
    str | None,
    c.choice("--by", values=LINEUP_BY, help="Repeat the line-up per {values} (adds that column)"),
]
SubfamilyOpt = Annotated[
    bool | None,
    typer.Option(
        "--subfamily/--no-subfamily",
        help="Break every category down by subfamily (default: only gemm, by library, "
        "and memory, by copy kind; --no-subfamily: categories only)",
        show_default=False,
    ),
]
ShowOtherOpt = Annotated[
    bool,
    typer.Option(
        "--show-other",
        help="List the kernels no rule matched (category other), by time, with the "
        "demangled and base names rules match on",
    ),
]
RulesOpt = Annotated[
    Path | None,
    typer.Option(
        "--rules",
        help="TOML file of extra category rules, tried before the built-in ones "
        "(same format as tracelens/data/categories.toml; a rule with a built-in id "
        "replaces it)",
        metavar="FILE",
    ),
]
NameOpt = Annotated[
    str,
    c.choice(
        "--name",
        values=NAME_KINDS,
        help="How to print the top kernels: {values} (categories are always decided on "
        "the demangled name)",
        metavar="KIND",
    ),
]
TopOpt = Annotated[int | None, c.top_option("categories, largest first (names, with --show-other)")]


@app.command()
@c.grouped
def lineup(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    by: ByOpt = None,
    subfamily: SubfamilyOpt = None,
    show_other: ShowOtherOpt = False,
    rules: RulesOpt = None,
    name: NameOpt = "short",
    top: TopOpt = None,
    filters: c.Filters = c.FILTERS,
    out: c.Output = c.OUTPUT,
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
    from .. import views
    from ..categories import load_rules
    from ..lineup import category_summary, unclassified_kernels

    ruleset = load_rules(rules)
    with c.open_filtered(trace, demo, filters) as (tr, where, nvtx_note):
        if show_other:  # all of them: the caption counts those --top leaves out
            df = unclassified_kernels(tr, by=by, rules=ruleset, where=where)
        else:
            df = category_summary(
                tr, by=by, rules=ruleset, where=where, subfamily=subfamily, name=name, top=top
            )
        note = join_notes(nvtx_note, tr.graph_note(where), tr.damage_note())
        hint = c.empty_hint(tr, where, df.height)
    view = views.unclassified if show_other else views.lineup
    out.show(view, df, tr, note=note, hint=hint, by=by, top=top)
