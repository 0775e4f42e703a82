"""A TraceDiff as text: the evidence board first, then the tables (terminal, Markdown or
JSON). Pure functions: the terminal's width and colour come in as arguments."""

from __future__ import annotations

import json
import math
import sys
from typing import TYPE_CHECKING

from ..units import fmt_signed_ns
from .clues import short_name
from .sections import SECTIONS, heading, left_out, section_rows

# imported from here before compare.sections (the report's diff view)
from .sections import danger_heading as danger_heading
from .sections import danger_per_step as danger_per_step
from .sections import totals_caveat as totals_caveat
from .sections import totals_rows as totals_rows

if TYPE_CHECKING:
    from .model import TraceDiff


def impact_text(d: TraceDiff, impact_ns: float | None, clue_id: str | None = None) -> str:
    """A clue's impact for people: "+1.20 ms/step", "-3.4 ms" (total), "—" (none); the
    work outside the steps (``outside_steps``) once per capture: "+92.3 ms once"."""
    if impact_ns is None:
        return "—"
    if clue_id == "outside_steps":
        return fmt_signed_ns(impact_ns) + " once"
    return fmt_signed_ns(impact_ns) + ("/step" if d.steps_b else "")


def _summary_line(d: TraceDiff) -> str:
    if not d.clues:
        return "No difference found: no rule fired on these two traces."
    strong = sum(1 for c in d.clues if c.strength == "strong")
    return f"{len(d.clues)} clue{'s' if len(d.clues) != 1 else ''} ({strong} strong)."


def _table_name(name: str | None, width: int = 70) -> str:
    return short_name(name, width, templates=True)


def markdown(d: TraceDiff, *, top: int = 15) -> str:
    """The evidence board and tables as Markdown, ``top`` rows per table (0: every row)."""
    from ..render import md_code, md_text

    top = top or sys.maxsize

    short = _table_name

    # Kernel names, NVTX text and labels come from the traces: untrusted, always escaped.
    out = [f"## tracelens diff: {md_code(d.label_a)} (A) → {md_code(d.label_b)} (B)", ""]
    out += ["### Evidence board", "", _summary_line(d), ""]
    if d.clues:
        out += ["| Clue | Impact | Evidence | Verdict |", "| :--- | ---: | :--- | :--- |"]
        out += [
            f"| {md_text(c.clue)} | {impact_text(d, c.impact_ns, c.id)} | {md_text(c.evidence)} "
            f"| {md_text(c.verdict)} |"
            for c in d.clues
        ]
        out.append("")
    for note in d.notes:
        out += [f"_Note: {md_text(note)}._", ""]
    for key, title, headers in SECTIONS:
        rows = section_rows(d, key, top, short)
        if not rows:
            continue
        title, headers = heading(d, key, title, headers)
        out += [f"### {title}", ""]
        out.append("| " + " | ".join(headers) + " |")
        out.append(
            "| " + " | ".join(":---" if i == 0 else "---:" for i in range(len(headers))) + " |"
        )
        # Kernel names as code spans (literal, as in the other Markdown tables), the rest text.
        code = [h == "Kernel" for h in headers]
        out += [
            "| "
            + " | ".join(
                md_code(c, table=True) if k and c != "—" else md_text(c)
                for c, k in zip(row, code, strict=True)
            )
            + " |"
            for row in rows
        ]
        more = left_out(d, key, top)
        if more:
            out.append(f"\n_{more}._")
        out.append("")
    return "\n".join(out)


def table(d: TraceDiff, *, top: int = 15, width: int = 160, color: bool = False) -> str:
    """The terminal view, ``width`` columns wide, with bold/dim styles when ``color``;
    ``top`` rows per table (0: every row)."""
    import io

    from rich import box
    from rich.table import Table
    from rich.text import Text

    from ..render import printable, rich_console

    top = top or sys.maxsize

    # Kernel names, NVTX text and labels come from the traces: control characters (an ESC
    # sequence in a kernel name) are shown as \xNN, as every other text output does.
    short = _table_name
    buf = io.StringIO()
    console = rich_console(buf, width=width, color=color)
    console.print(
        Text(printable(f"tracelens diff: A = {d.label_a}  →  B = {d.label_b}"), style="bold")
    )
    console.print(Text(""))
    board = Table(
        title=Text("Evidence board"), title_justify="left", box=box.SIMPLE_HEAD, show_lines=True
    )
    board.add_column(Text("Clue"), ratio=2, overflow="fold")
    board.add_column(Text("Impact"), justify="right", no_wrap=True)
    board.add_column(Text("Evidence"), ratio=3, overflow="fold")
    board.add_column(Text("Verdict"), ratio=3, overflow="fold")
    for c in d.clues:
        style = {"strong": "bold", "moderate": "", "weak": "dim"}[c.strength]
        board.add_row(
            Text(printable(c.clue), style=style),
            Text(impact_text(d, c.impact_ns, c.id)),
            Text(printable(c.evidence)),
            Text(printable(c.verdict)),
        )
    if d.clues:
        console.print(board)
    console.print(Text(_summary_line(d)))
    for note in d.notes:
        console.print(Text(printable(f"Note: {note}.")))
    for key, title, headers in SECTIONS:
        rows = section_rows(d, key, top, short)
        if not rows:
            continue
        title, headers = heading(d, key, title, headers)
        t = Table(title=Text(title), title_justify="left", box=box.SIMPLE_HEAD)
        for i, h in enumerate(headers):
            t.add_column(
                Text(h),
                justify="left"
                if i == 0
                or h
                in (
                    "Kernel",
                    "Category",
                    "Fix",
                    "Rule",
                    "Seen in",
                    "Most common replacements",
                    "Region",
                )
                else "right",
                overflow="fold",
            )
        for row in rows:
            t.add_row(*(Text(printable(c)) for c in row))
        console.print(t)
        more = left_out(d, key, top)
        if more:
            console.print(Text(more + ".", style="dim"))
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


def _finite(obj):
    """JSON has no infinity or NaN: such ratios (e.g. growth from zero) become null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def to_json(d: TraceDiff) -> str:
    return json.dumps(_finite(d.to_dict()), indent=2, allow_nan=False) + "\n"
