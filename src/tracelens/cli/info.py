"""tracelens info: what an export is."""

from __future__ import annotations

import json

from . import _common as c
from . import app


@app.command()
def info(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    fmt: c.FormatOpt = "table",
    output: c.OutputOpt = None,
) -> None:
    """Versions, GPUs, processes, time span and event counts of an export."""
    c.check_choice("--format", fmt, ("table", "json"))
    with c.open_trace(trace, demo) as tr:
        meta = tr.info
    if fmt == "json":
        c.emit(json.dumps(meta.to_dict(), indent=2) + "\n", output)
        return
    from ..render import describe_info

    c.emit(describe_info(meta), output)
