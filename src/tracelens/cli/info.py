"""tracelens info: what an export is."""

from __future__ import annotations

from typing import Annotated

from . import _common as c
from ._app import app


@app.command()
def info(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    fmt: Annotated[str, c.format_option(("table", "json", "markdown"))] = "table",
    output: c.OutputOpt = None,
) -> None:
    """Versions, GPUs, processes, time span and event counts of an export."""
    from .. import views

    with c.open_trace(trace, demo) as tr:
        meta = tr.info
    c.show(views.info, meta, fmt=fmt, output=output)
