"""tracelens decode: what a kernel name says, field by field."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import UsageError
from . import _common as c
from ._app import app
from ._notes import join_notes


@app.command()
@c.grouped
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
    filters: c.Filters = c.FILTERS,
    out: c.Output = c.OUTPUT,
) -> None:
    """Decode kernel names into fields (value, meaning, confidence: confirmed, inferred or
    unknown), or with --trace/--demo every kernel of a trace, largest GPU time first.

    A name no decoder recognises (family other) still prints, with the fields it has;
    tokens a decoder does not know are shown as unknown fields, never dropped. With a
    trace, Fields summary lists field=value pairs, '?' marking a field whose meaning is
    unknown; --format json gives every field in full.
    """
    from .. import views
    from ..kernelnames import decode as decode_name
    from ..lineup import decoded_kernels

    if names and (trace is not None or demo is not None):
        raise UsageError("give kernel NAMEs or --trace TRACE / --demo NAME, not both")
    if not names and trace is None and demo is None:
        raise UsageError("nothing to decode: give kernel NAMEs, or --trace TRACE / --demo NAME")
    if names:
        decoded = [decode_name(n) for n in _read_names(names)]
        c.show(views.decoded_names, decoded, fmt=out.fmt, output=out.output, timeunit=out.timeunit)
        return
    with c.open_filtered(trace, demo, filters) as (tr, where, note):
        df = decoded_kernels(tr, where=where, top=top)
        note = join_notes(note, tr.graph_note(where), tr.damage_note(("kernel",)))
    out.show(views.decoded_kernels, df, tr, note=note, top=top)


def _read_names(names: list[str]) -> list[str]:
    """The names to decode: the arguments, with '-' standing for stdin's lines. Bytes that
    are not UTF-8 (in stdin, or in an argument, where Python holds them as surrogate
    escapes) are shown as ``\\xNN``, as a trace's names are: the surrogates could not be
    written as csv (internal error) and json wrote them as ``\\x``, an invalid JSON escape."""
    from ..escape import encodable

    out: list[str] = []
    for n in names:
        if n == "-":
            out += [line.strip() for line in _stdin_text().splitlines() if line.strip()]
        elif not n.strip():
            # stdin's blank lines are skipped; a blank argument is a mistake (an unset
            # shell variable, say), not a kernel to decode under a blank heading
            raise UsageError("a NAME is empty; give kernel names, or '-' to read them from stdin")
        else:
            out.append(n)
    if not out:
        raise UsageError("no kernel names on stdin")
    return [encodable(n) for n in out]


def _stdin_text() -> str:
    """stdin as text whatever the locale: its bytes as UTF-8, the others kept as surrogate
    escapes (a strict decoder would stop at the first one)."""
    raw = getattr(sys.stdin, "buffer", None)
    return sys.stdin.read() if raw is None else raw.read().decode("utf-8", "surrogateescape")
