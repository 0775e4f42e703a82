"""tracelens report: one self-contained HTML page (or a Markdown summary)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import _common as c
from . import app


@app.command()
def report(
    a: Annotated[
        Path | None,
        typer.Argument(
            help="nsys SQLite export (the baseline A when B is given)",
            show_default=False,
            readable=False,
        ),
    ] = None,
    b: Annotated[
        Path | None,
        typer.Argument(
            help="Second export: compare it with A (the diff view)",
            show_default=False,
            readable=False,
        ),
    ] = None,
    demo: Annotated[
        bool, typer.Option("--demo", help="Report on the bundled demo pair: A = bs1, B = bs16")
    ] = False,
    top: Annotated[int, typer.Option("--top", "-n", help="Kernel rows per table")] = 20,
    name: Annotated[
        str, typer.Option("--name", help="Group kernels by demangled or short name", metavar="KIND")
    ] = "demangled",
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="html or markdown", metavar="FORMAT")
    ] = "html",
    output: c.OutputOpt = None,
) -> None:
    """One self-contained HTML page (works offline): evidence board, census, lineup, stakeout,
    timeline, danger zone. Two traces: the diff view on top. --format markdown: a compact
    summary for CI job summaries and PR comments."""
    from ..errors import UsageError
    from ..report import build_markdown, build_report

    if a is None and not demo:
        raise UsageError("missing TRACE: pass one or two nsys SQLite exports, or --demo")
    c.check_choice("--format", fmt, ("html", "markdown"))
    c.check_choice("--name", name, ("demangled", "short"))
    render = build_report if fmt == "html" else build_markdown
    if demo or b is not None:
        with c.open_pair(a, b, demo) as (ta, tb):
            ta.require_kernels(), tb.require_kernels()  # exit 3, as census: not an empty page
            text = render(ta, tb, top=top, name=name)
    else:
        with c.open_trace(a, None) as ta:
            ta.require_kernels()
            text = render(ta, top=top, name=name)
    c.emit(text, output)
