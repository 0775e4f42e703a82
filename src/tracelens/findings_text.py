"""The text of :func:`tracelens.findings.find_issues`' result: a table or Markdown per rule
with its rows, why and fix; CSV of every row; JSON of every rule (what ``tracelens
findings`` prints)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .render import DEFAULT_WIDTH

if TYPE_CHECKING:
    from .findings import Findings

__all__ = ["render"]


def render(
    result: Findings,
    *,
    fmt: str,
    timeunit: str,
    source: str,
    width: int = DEFAULT_WIDTH,
    color: bool = False,
) -> str:
    """``table``/``markdown``: per rule, what it found (or that it found nothing or was
    skipped), its rows, why it matters and the fix; ``csv``: every row with a ``rule``
    column; ``json``: one object per rule (rule, nsys, title, total, skipped, thresholds,
    why, fix, rows)."""
    import json

    from . import render as r

    if fmt == "csv":
        return r.frame(result.frame, fmt="csv", timeunit=timeunit)
    if fmt == "json":
        doc = [
            {
                "rule": x.rule,
                "nsys": x.nsys,
                "title": x.title,
                "total": x.total,
                **({"not_counted": x.excused, "why_not_counted": x.excuse} if x.excused else {}),
                "skipped": x.skipped,
                "thresholds": x.thresholds,
                "why": x.why,
                "fix": x.fix,
                "rows": r.convert_times(x.frame, timeunit).to_dicts(),
            }
            for x in result.results
        ]
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    out = []
    for x in result.results:
        name = x.rule + (f" [nsys {x.nsys}]" if x.nsys else "")
        if x.skipped:
            out.append(f"{name}: skipped: {x.skipped}\n")
            continue
        if not x.total:
            out.append(f"{name}: nothing found\n")
            continue
        shown = "" if x.frame.height == x.total else f" (first {x.frame.height}; --limit 0 for all)"
        title = f"{name}: {x.title}: {x.total:,} found{shown}"
        if x.excuse:
            title += f"; {x.excuse}"
        caption = f"why: {x.why} fix: {x.fix}"
        if fmt == "markdown":
            table = r.markdown(r.convert_times(x.frame, timeunit), timeunit=timeunit, title=title)
            out.append(table + f"\n{r.md_text(caption)}\n")
        else:
            out.append(
                r.frame(
                    x.frame,
                    fmt="table",
                    timeunit=timeunit,
                    title=title,
                    caption=caption,
                    width=width,
                    color=color,
                )
            )
    head = f"findings of {source}: {len(result.fired)} of {len(result.results)} rules found something\n"
    notes = "".join(f"note: {n}\n" for n in result.notes)
    return head + ("\n" if fmt == "markdown" else "").join(out) + notes
