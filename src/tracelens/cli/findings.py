"""tracelens findings: the rules of nsys analyze (same defaults, same rows), plus exposed
communication and launch-bound idle time, each with a fix."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from . import _common as c
from ._app import app
from ._notes import MACHINE_FORMATS, join_notes

TABLE_ROWS_PER_RULE = 50  # nsys analyze's default rows per rule


@app.command()
@c.grouped
def findings(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    rule: Annotated[
        list[str] | None,
        typer.Option("--rule", help="Only this rule (repeatable)", metavar="RULE"),
    ] = None,
    threshold: Annotated[
        list[str] | None,
        typer.Option(
            "--threshold",
            help="Override a threshold, e.g. gpu_gaps.gap_ms=100 (repeatable; defaults and "
            "their reasons in tracelens/data/findings.toml)",
            metavar="RULE.KEY=VALUE",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        c.at_least(
            "--limit",
            minimum=0,
            meaning="every row",
            help="Rows per rule; 0 for all (default: 50 in table and markdown, as nsys "
            "analyze; every row in csv and json)",
        ),
    ] = None,
    fail_on: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-on",
            help="For CI: exit 1, after printing, when this rule found something (repeatable; "
            "'any' for every rule)",
            metavar="RULE",
        ),
    ] = None,
    filters: c.Filters = c.FILTERS,
    out: c.Output = c.OUTPUT,
) -> None:
    """nsys analyze's rules with its defaults and the same rows: gpu_gaps [gpu-starv],
    gpu_low_util [gpu-low-util], sync_memcpy [cuda-sync-memcpy], sync_memset
    [cuda-sync-memset], sync_api [cuda-sync-api], pageable_async_memcpy [cuda-async-memcpy];
    then exposed_communication and launch_bound (from tracelens util). A rule whose data the
    export lacks is skipped, as nsys skips it."""
    from ..findings import find_issues, parse_threshold, rule_ids
    from ..findings_text import render

    for name in fail_on or ():
        if name != "any":
            c.check_choice("--fail-on", name, rule_ids())
    overrides = {(r, k): v for r, k, v in map(parse_threshold, threshold or ())}
    if limit is None:  # what a reader sees is capped; what a program reads is whole
        limit = TABLE_ROWS_PER_RULE if out.fmt in ("table", "markdown") else 0
    with c.open_filtered(trace, demo, filters) as (tr, where, note):
        result = find_issues(
            tr, only=tuple(rule or ()), thresholds=overrides, limit=limit or None, where=where
        )
        note = join_notes(note, tr.damage_note())
        if out.fmt in MACHINE_FORMATS:  # table and markdown show the rules' notes themselves
            note = join_notes(note, *result.notes)
        # no rule found anything: say so when the filters explain it (a window outside the
        # capture, a device or process without GPU work), as every command's filters do
        hint = c.empty_hint(tr, where, len(result.fired))
        failing = [r for r in result.fired if r in (fail_on or ()) or "any" in (fail_on or ())]
        # a gate whose filters select no GPU work looked at nothing, whatever else fired
        # (asked only when no gated rule fired: a window's reason reads the trace's span)
        blind = None
        if fail_on and not failing:
            blind = hint if not result.fired else c.empty_hint(tr, where, 0)
    out.show(render, result, tr, note=note, hint=None if blind else hint)  # blind: said below
    if why := result.unchecked(tuple(fail_on or ())):
        print(f"tracelens: findings: --fail-on {why}", file=sys.stderr)
        raise typer.Exit(3)
    if failing:
        print(f"tracelens: findings: {', '.join(failing)} found something", file=sys.stderr)
        raise typer.Exit(1)
    if blind:
        gates = ", ".join(fail_on or ())
        print(f"tracelens: findings: --fail-on {gates} could not look: {blind}", file=sys.stderr)
        raise typer.Exit(3)
