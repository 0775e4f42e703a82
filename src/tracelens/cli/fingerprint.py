"""tracelens fingerprint: the numerical path of a run, as a small JSON baseline for CI; and
the path board that ``diff`` shows when a fingerprint is on either side."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import _common as c
from ._app import app
from ._notes import join_notes, with_note

BOARD_FORMATS = c.BOARD_FORMATS


@app.command()
def fingerprint(
    trace: c.TraceArg = None,
    demo: c.DemoOpt = None,
    check: Annotated[
        Path | None,
        typer.Option(
            "--check",
            help="Compare with this baseline fingerprint instead: print the path board and "
            "exit 1 when the path differs",
            metavar="BASELINE.json",
            readable=False,
        ),
    ] = None,
    top: Annotated[int, c.top_option("groups of changed regions and changes (with --check)")] = 10,
    fmt: Annotated[
        str,
        c.choice(
            "--format", "-f", values=BOARD_FORMATS, help="With --check: {values}", metavar="FORMAT"
        ),
    ] = "table",
    output: c.OutputOpt = None,
) -> None:
    """The numerical path of a run as JSON: per region (NVTX path, else step) and step, the
    kernel variants in launch order with their launch configuration, decoded math fields and
    danger rules; no timing. The same trace always gives the same bytes."""
    from ..fingerprint import build, compare, dumps, load

    _not_onto_inputs(output, check)
    baseline = load(check) if check is not None else None
    with c.open_trace(trace, demo) as tr:
        doc = build(tr)
        label = tr.path.name
    # What the path leaves out (damaged records): on stderr beside the document, the last
    # line of a board (stderr too for a json board), as every command says it.
    note = join_notes(*doc.get("notes", ()))
    if baseline is None:
        c.emit(with_note(dumps(doc), note, "json"), output)
        return
    diff = compare(baseline, doc)
    c.emit(with_note(_board(diff, fmt, check.name, label, top), note, fmt), output)
    if diff.not_measured is not None:  # no change measured: neither a pass nor a change
        from ..errors import UsageError

        raise UsageError(f"--check: the path was not measured: {diff.not_measured}")
    if not diff.identical:
        raise typer.Exit(1)


def _board(diff, fmt: str, a: str, b: str, top: int) -> str:
    from ..fingerprint import board

    if fmt == "json":
        return board.to_json(diff, a, b)
    render = board.markdown if fmt == "markdown" else board.text
    return render(diff, a, b, top=top or None)


def path_diff_command(
    a: Path | None,
    b: Path | None,
    demo: bool,
    fail_if: list[str] | None,
    fmt: str,
    top: int,
    output: Path | None,
) -> None:
    """``tracelens diff A B`` when a fingerprint is on either side (or a path gate is asked
    for): the path board, then the gates (``path_changed``, ``variant_changed``,
    ``danger_added``, ``launches_moved``, or any ``FIGURE OP NUMBER`` over the path
    figures)."""
    from ..compare import check_gates
    from ..errors import UsageError
    from ..fingerprint.sources import gate_expressions, path_diff

    if demo:
        c.check_pair_demo(a, b)
        a, b = c._demo("bs1"), c._demo("bs16")
    elif a is None or b is None:
        raise UsageError("diff needs two inputs: A (baseline) and B, or --demo")
    _not_onto_inputs(output, a, b)
    diff = path_diff(a, b)
    expressions = gate_expressions(fail_if)
    # A gate that cannot be read (not FIGURE OP NUMBER, no such figure) fails before any
    # output, as on every command; one on a path the traces did not record fails after the
    # board, which says why (as fingerprint --check does: neither a pass nor a change).
    check_gates(diff.figures, expressions)
    c.emit(_board(diff, fmt, a.name, b.name, top), output)
    c.fail_if_tripped(check_gates(diff.gate_figures(), expressions))


def _not_onto_inputs(output: Path | None, *inputs: Path | None) -> None:
    """Refuse ``-o`` onto a baseline or a side of ``diff``: they are read by path (not
    opened as a command's traces, which emit guards), so the board was written over them
    (``diff run.sqlite base.json -o run.sqlite`` replaced the trace)."""
    import os

    from ..errors import UsageError

    if output is None or str(output) == "-" or not output.exists():
        return
    for path in inputs:
        try:
            same = path is not None and os.path.samefile(output, path)
        except OSError:
            continue
        if same:
            raise UsageError(f"-o {output} is one of the inputs; choose another file")
