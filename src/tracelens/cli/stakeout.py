"""tracelens stakeout: every launch of one kernel."""

from __future__ import annotations

from typing import Annotated

import typer

from ..choices import MATCHES, SORTS
from ..errors import UsageError
from . import _common as c
from ._app import app
from ._notes import MACHINE_FORMATS, join_notes


@app.command()
@c.grouped
def stakeout(
    trace: c.TraceArg = None,
    kernel: Annotated[
        str | None,
        typer.Argument(
            help="Kernel name, or part of it, matched against demangled and short names",
            show_default=False,
        ),
    ] = None,
    demo: c.DemoOpt = None,
    match: Annotated[
        str,
        c.choice(
            "--match",
            values=MATCHES,
            help="exact, contains (substring, case-sensitive) or regex (RE2; matches "
            "anywhere unless anchored with ^ $)",
            metavar="HOW",
        ),
    ] = "contains",
    name: c.NameOpt = "demangled",
    sort: Annotated[
        str,
        c.choice("--sort", values=SORTS, help="start (earliest first) or duration (longest first)"),
    ] = "start",
    ignore_case: Annotated[
        bool, typer.Option("--ignore-case", "-i", help="Match without regard to case")
    ] = False,
    limit: Annotated[
        int,
        c.at_least(
            "--limit",
            minimum=0,
            meaning="every launch",
            help="Launches to list (0: every one); the summary covers all",
        ),
    ] = 50,
    filters: c.Filters = c.FILTERS,
    out: c.Output = c.OUTPUT,
) -> None:
    """Every launch of one kernel: summary, launch configurations, duration histogram, then
    per launch its start (from session start), duration, configuration, device,
    stream, the CUDA API call that launched it, its queue time (kernel start - call end; when
    negative, the kernel started before the call returned, or the host and GPU clocks
    differ: marked 'early' in table and markdown, not a latency) and the innermost NVTX
    range around that call. -i/--ignore-case matches any way without regard to case. csv lists the launches only.
    --start/--end count from session start, as in census."""
    from .. import stakeout as analysis
    from ..stakeout_text import cut_note, render

    if demo is not None and kernel is None and trace is not None:
        trace, kernel = None, str(trace)  # `stakeout --demo bs1 KERNEL`
    if kernel is None:
        raise UsageError("missing KERNEL: give a kernel name or part of one")
    with c.open_filtered(trace, demo, filters) as (tr, where, nvtx_note):
        result = analysis.stakeout(
            tr,
            kernel,
            match=match,
            name=name,
            sort=sort,
            limit=limit,
            where=where,
            ignore_case=ignore_case,
        )
        # table and markdown say it in the launches' caption; csv and json have none
        cut = cut_note(result) if out.fmt in MACHINE_FORMATS else None
        note = join_notes(nvtx_note, tr.graph_note(where), tr.damage_note(("kernel",)), cut)
        hint = c.hint_text(result.hint) or c.empty_hint(tr, where, result.total_launches)
    out.show(render, result, tr, note=note, hint=hint)
