"""tracelens danger: kernels that are determinism or batch-invariance risks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..choices import LEVELS
from . import _common as c
from ._app import app
from ._notes import join_notes


@app.command()
@c.grouped
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
        c.choice(
            "--fail-on",
            values=LEVELS,
            help="For CI: exit 1, after printing, when a kernel at this level or a more severe "
            "one is present (high > medium > info)",
            metavar="LEVEL",
        ),
    ] = None,
    top: c.TopOpt = None,
    filters: c.Filters = c.FILTERS,
    out: c.Output = c.OUTPUT,
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
    from .. import views
    from ..danger import danger_kernels, kernels_at_or_above, load_danger_rules

    ruleset = load_danger_rules(rules)
    with c.open_filtered(trace, demo, filters) as (tr, where, nvtx_note):
        df = danger_kernels(tr, rules=ruleset, where=where)
        note = join_notes(nvtx_note, tr.graph_note(where), tr.damage_note(("kernel",)))
        hint = c.empty_hint(tr, where, df.height)
    out.show(views.danger, df, tr, note=note, hint=hint, top=top)
    failing = kernels_at_or_above(df, fail_on) if fail_on else 0
    if failing:
        print(
            f"tracelens: danger: {views.plural(failing, 'kernel')} at level {fail_on} or above",
            file=sys.stderr,
        )
        raise typer.Exit(1)
