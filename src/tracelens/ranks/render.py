"""A :class:`RanksResult` as text: the findings and tables (table, markdown), one table
(csv, or any format with ``view``), or everything (json)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .. import render

if TYPE_CHECKING:
    import polars as pl

    from .reduce import RanksResult

#: What ``view`` may name: the frames of a RanksResult (``matrix`` is the rank x step
#: matrix of step durations).
VIEWS = (
    "ranks", "steps", "matrix", "stragglers", "collectives", "waits", "clock",
    "inconsistencies", "failures",
)  # fmt: skip
# The per-rank columns shown in the table and Markdown overview (csv/json have them all).
_OVERVIEW = (
    "rank", "steps", "steady_step_ns", "compute_ns", "exposed_communication_ns", "waited_ns",
    "caused_ns", "clock_correction_ns", "danger_high", "top_kernel",
)  # fmt: skip


def view_frame(result: RanksResult, view: str) -> pl.DataFrame:
    frames = {
        "ranks": result.ranks,
        "steps": result.steps,
        "matrix": result.step_matrix(),
        "stragglers": result.step_stragglers,
        "collectives": result.collectives,
        "waits": result.waits,
        "clock": result.clock,
        "inconsistencies": result.inconsistencies,
        "failures": result.failures,
    }
    return frames[view]


def render_ranks(
    result: RanksResult, *, fmt: str, timeunit: str = "ns", view: str | None = None
) -> str:
    """The result in ``fmt`` (table, csv, json, markdown). Without ``view``: table and
    markdown give the findings, the per-rank table, the stragglers per step and the clock
    corrections; csv gives the per-rank table; json every frame."""
    if view is not None:
        return render.frame(view_frame(result, view), fmt=fmt, timeunit=timeunit, title=view)
    if fmt == "csv":
        return render.frame(result.ranks, fmt="csv", timeunit=timeunit)
    if fmt == "json":
        return _json(result, timeunit)
    return _sections(result, fmt, timeunit)


def _headline(result: RanksResult) -> str:
    n = result.ranks.height
    text = f"{n} rank{'s' if n != 1 else ''} analysed"
    if result.missing_ranks:
        text += f"; missing: {', '.join(map(str, result.missing_ranks))}"
    return text


def _sections(result: RanksResult, fmt: str, timeunit: str) -> str:
    md = fmt == "markdown"
    out = [f"**{_headline(result)}**\n" if md else f"ranks: {_headline(result)}\n"]
    for finding in result.findings:
        out.append(f"- {render.md_text(finding) if md else finding}\n")
    for row in result.failures.iter_rows(named=True):
        line = f"failed: {row['path']}: {row['reason']}"
        out.append(f"- {render.md_text(line)}\n" if md else f"{line}\n")
    shown = [c for c in _OVERVIEW if c in result.ranks.columns]
    sections = [
        (result.ranks.select(shown), "per rank"),
        (result.step_stragglers, "stragglers per step"),
        (result.clock, "clock alignment"),
    ]
    for df, title in sections:
        if df.height:
            out.append("\n")
            out.append(render.frame(df, fmt=fmt, timeunit=timeunit, title=title))
    return "".join(out)


def _json(result: RanksResult, timeunit: str) -> str:
    doc = {
        "ranks_analysed": result.ranks.height,
        "missing_ranks": list(result.missing_ranks),
        "reference_rank": result.reference_rank,
        "findings": list(result.findings),
    }
    for view in VIEWS:
        doc[view] = json.loads(
            render.json(render.convert_times(view_frame(result, view), timeunit))
        )
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
