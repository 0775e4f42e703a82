"""tracelens diff: why two runs differ."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from . import _common as c
from ._app import app

TraceA = c.trace_argument("Baseline export (A)")
TraceB = c.trace_argument("Export to compare (B)")
DemoOpt = Annotated[
    bool, typer.Option("--demo", help="Compare the bundled demo pair: A = bs1, B = bs16")
]
NameOpt = Annotated[
    str, typer.Option("--name", help="Match kernels by demangled or short name", metavar="KIND")
]
TopOpt = Annotated[int, c.top_option("kernel rows, danger-zone rows and NVTX regions")]


NvtxOpt = Annotated[
    str | None,
    typer.Option(
        "--nvtx",
        help="Compare only the GPU work launched inside the NVTX ranges with this label in "
        "both traces (glob allowed: 'decode_step_*')",
        metavar="LABEL",
    ),
]
FailIfOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-if",
        help="CI gate, repeatable: FIGURE OP NUMBER, e.g. 'gpu_time_ratio>1.05', "
        "'new_danger>0' or 'util<0.8' (B's util and steps figures; A's end in _a: "
        "'util_a'); exit 1 when any is true (figures: see the JSON output)",
        metavar="EXPR",
    ),
]
FormatOpt = Annotated[str, c.format_option(c.BOARD_FORMATS)]


@app.command()
@c.grouped
def diff(
    a: TraceA = None,
    b: TraceB = None,
    demo: DemoOpt = False,
    name: NameOpt = "demangled",
    top: TopOpt = 15,
    sides: c.Sides = c.SIDES,
    nvtx: NvtxOpt = None,
    step: c.StepOpt = None,
    fail_if: FailIfOpt = None,
    fmt: FormatOpt = "table",
    output: c.OutputOpt = None,
) -> None:
    """Why two runs differ: evidence board, then totals, categories, kernels, launch order.
    With a fingerprint .json on either side, or a --fail-if on a path gate
    (path_changed, variant_changed, danger_added, launches_moved): the numerical-path
    board instead (see `tracelens fingerprint`)."""
    # -- numerical-path comparison (fingerprint helper's hook; body in cli/fingerprint.py) --
    from ..fingerprint.sources import wants_path

    if wants_path(a, b, fail_if):
        from .fingerprint import path_diff_command

        return path_diff_command(a, b, demo, fail_if, fmt, top, output)
    # -- end of the hook ------------------------------------------------------------------
    from ..compare import diff as compute
    from ..report.selection import Selection, said

    top = c.every(top)  # --top 0: every row
    where_a = c.side_window(c.Filters(), "a", sides.a_start, sides.a_end)
    where_b = c.side_window(c.Filters(), "b", sides.b_start, sides.b_end)
    view = {"format": fmt, "top": top, "name": name}
    if fmt not in ("json", "markdown"):
        view |= c.terminal(output)
    with c.open_pair(a, b, demo) as (ta, tb):
        if not sides.given() and nvtx is None and step is None:
            # the whole traces: the board an earlier run kept, or made and kept
            text, figures = _whole_board(ta, tb, name, view)
            return _show(text, figures, output=output, fail_if=fail_if or [])
        # `is not None`: an empty label is a label no range has, not no --nvtx
        label_a, label_b = (nvtx if own is None else own for own in (sides.a_nvtx, sides.b_nvtx))
        (where_a, note_a, ranges_a), (where_b, note_b, ranges_b) = (
            c.nvtx_selection(tr, label, where, step)
            for tr, label, where in ((ta, label_a, where_a), (tb, label_b, where_b))
        )
        # each side's selection in the words of the report's page of the pair
        chosen = (Selection.of(where_a, note_a), Selection.of(where_b, note_b))
        result = compute(
            ta, tb, name=name, where_a=where_a, where_b=where_b,
            nvtx_ranges=(ranges_a, ranges_b), selected=said(chosen),
        )  # fmt: skip
        hints = _windows_outside(("A", ta, where_a), ("B", tb, where_b))
    text, figures = _board(result, view)
    _show(text, figures, output=output, fail_if=fail_if or [], hints=hints)


def _windows_outside(*sides) -> list[str]:
    """Per side (name, trace, filter) whose window lies outside its trace's span, why that
    side compares nothing, as every command says it (:func:`tracelens.hints.why_empty`)."""
    from ..hints import why_empty

    return [
        f"{side}: {why}"
        for side, trace, where in sides
        if (where.start_ns is not None or where.end_ns is not None)
        and (why := why_empty(trace, where)) is not None
    ]


def _whole_board(ta, tb, name: str, view: dict) -> tuple[str, Any]:
    """:func:`_board` of the whole traces, read back when an earlier run kept it in A's
    cache entry, else made and kept there (:mod:`tracelens.compare.kept`)."""
    from ..compare import diff as compute
    from ..compare import kept

    return kept.board(ta, tb, view, lambda: _board(compute(ta, tb, name=name), view))


def _board(result, view: dict) -> tuple[str, Any]:
    """The diff shown as ``view`` says (format, top; a table's width and colour), and the
    figures ``--fail-if`` reads."""
    from ..compare import render

    if view["format"] == "json":
        text = render.to_json(result)
    elif view["format"] == "markdown":
        text = render.markdown(result, top=view["top"])
    else:
        text = render.table(result, top=view["top"], width=view["width"], color=view["color"])
    return text, result.figures


def _show(text: str, figures, *, output, fail_if: list[str], hints=()) -> None:
    """Write the diff's ``text``, then ``hints`` on stderr (why a side is empty); exit 1
    (after the output) when a --fail-if gate over ``figures`` trips (a bad gate fails
    before any output)."""
    import sys

    gates = c.check_gates(figures, fail_if)
    c.emit(text, output)
    for hint in hints:
        print(f"tracelens: {hint}", file=sys.stderr)
    c.fail_if_tripped(gates)
