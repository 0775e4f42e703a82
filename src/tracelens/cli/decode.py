"""tracelens decode: what a kernel name says, field by field."""

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

    from ..kernelnames import KernelName


@app.command()
def decode(
    names: Annotated[
        list[str] | None,
        typer.Argument(
            help="Kernel names in any spelling (demangled, short, mangled _Z..., kineto); "
            "'-' reads names from stdin, one a line",
            show_default=False,
            metavar="NAME",
        ),
    ] = None,
    trace: Annotated[
        Path | None,
        typer.Option(
            "--trace",
            help="Decode every distinct kernel of this nsys SQLite export, with its GPU time",
            metavar="TRACE",
            readable=False,
        ),
    ] = None,
    demo: c.DemoOpt = None,
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
    """Decode kernel names into fields (value, meaning, confidence: confirmed, inferred or
    unknown), or with --trace/--demo every kernel of a trace, largest GPU time first.

    A name no decoder recognises (family other) still prints, with the fields it has;
    tokens a decoder does not know are shown as unknown fields, never dropped. With a
    trace, Fields summary lists field=value pairs, '?' marking a field whose meaning is
    unknown; --format json gives every field in full.
    """
    from ..kernelnames import decode as decode_name
    from ..lineup import decoded_kernels

    c.check_choice("--format", fmt, c.FORMATS)
    c.check_choice("--timeunit", timeunit, c.TIME_UNITS)
    if names and (trace is not None or demo is not None):
        raise UsageError("give kernel NAMEs or --trace TRACE / --demo NAME, not both")
    if not names and trace is None and demo is None:
        raise UsageError("nothing to decode: give kernel NAMEs, or --trace TRACE / --demo NAME")
    if names:
        decoded = [decode_name(n) for n in _read_names(names)]
        c.emit(_names_text(decoded, fmt), output)
        return
    where = c.event_filter(device, pid, stream, start, end)
    with c.open_trace(trace, demo) as tr:
        df = decoded_kernels(tr, where=where, top=top)
        title = f"decode of {tr.path.name}: every kernel by GPU time"
        note = tr.graph_note(where)
    if fmt != "json":
        df = df.drop("fields")
    shown = f"{df.height} kernel rows" + (f" (top {top})" if top else "")
    caption = f"{shown}; '?' marks a field whose meaning is unknown"
    text = c.render_frame(df, fmt, timeunit, title=title, caption=caption)
    c.emit(with_note(text, note, fmt), output)


def _read_names(names: list[str]) -> list[str]:
    out: list[str] = []
    for n in names:
        if n == "-":
            out += [line.strip() for line in sys.stdin.read().splitlines() if line.strip()]
        else:
            out.append(n)
    if not out:
        raise UsageError("no kernel names on stdin")
    return out


def _fields_frame(k: KernelName) -> pl.DataFrame:
    import polars as pl

    schema = {c: pl.String for c in ("field", "value", "meaning", "confidence")}
    rows = [(f.name, f.value, f.meaning, f.confidence) for f in k.fields]
    return pl.DataFrame(rows, schema=schema, orient="row")


def _about(k: KernelName, markdown: bool = False) -> list[str]:
    """Lines saying what the name is, before its fields (``markdown``: the name is a code
    span; the names are untrusted text)."""
    from ..render import md_code

    cat = k.category + (f" / {k.subfamily}" if k.subfamily else "")
    lines = [f"family {k.family}; category {cat}" + (f" (rule {k.rule_id})" if k.rule_id else "")]
    if k.normalized != k.raw:
        lines.append(f"normalized: {md_code(k.normalized) if markdown else k.normalized}")
    if not k.fields:
        lines.append("no fields: no decoder recognises this name")
    return lines


def _names_text(decoded: list[KernelName], fmt: str) -> str:
    import json

    import polars as pl

    if fmt == "json":
        return json.dumps([k.to_dict() for k in decoded], ensure_ascii=False) + "\n"
    if fmt == "csv":
        # One row per field; a name without fields still gets its row.
        cols = (
            "name",
            "family",
            "category",
            "subfamily",
            "field",
            "value",
            "meaning",
            "confidence",
        )
        rows = []
        for k in decoded:
            head = (k.raw, k.family, k.category, k.subfamily)
            fields = [(f.name, f.value, f.meaning, f.confidence) for f in k.fields]
            rows += [head + f for f in fields] or [head + (None,) * 4]
        df = pl.DataFrame(rows, schema={col: pl.String for col in cols}, orient="row")
        return c.render_frame(df, "csv", "ns")
    from ..render import md_code

    parts = []
    for k in decoded:
        if fmt == "markdown":
            text = "\n\n".join([f"**{md_code(k.raw)}**", *_about(k, markdown=True)]) + "\n"
            if k.fields:
                text += "\n" + c.render_frame(_fields_frame(k), "markdown", "ns")
        else:
            text = "\n".join([k.raw, *_about(k)]) + "\n"
            if k.fields:
                text += c.render_frame(_fields_frame(k), "table", "ns")
        parts.append(text.rstrip("\n"))
    return "\n\n".join(parts) + "\n"
