"""A :class:`RanksResult` as text: the findings and tables (table, markdown), one table
(csv, or any format with ``view``), or everything (json)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .. import render
from ..choices import RANK_VIEWS
from ..escape import printable
from .findings import rank_list
from .reduce import every_rank

if TYPE_CHECKING:
    import polars as pl

    from .reduce import RanksResult

VIEWS = RANK_VIEWS  # what ``view`` may name: the frames of a RanksResult
# What json holds: every view, and the processes set aside (``set_aside``: path, pid,
# kernels, device, reason), which ``view_frame`` also gives though ``--view`` does not list it
_JSON_FRAMES = tuple(dict.fromkeys((*VIEWS, "set_aside")))
# The per-rank columns shown in the table and Markdown overview (csv/json have them all).
_OVERVIEW = (
    "rank", "steps", "steady_step_ns", "compute_ns", "exposed_communication_ns", "waited_ns",
    "caused_ns", "clock_correction_ns", "danger_high", "top_kernel",
)  # fmt: skip
# Instants, not durations: ns since the epoch (1.7e18) divided into ms or s is a float of 16
# significant digits, which rounds off the ns (in s, the tenths of a µs) and writes digits
# the export never held (1735732800123.4568 ms for ...123456789 ns). They stay integer ns,
# under their ns name, whatever --timeunit converts the durations to.
_INSTANTS = ("session_start_utc_ns",)


def view_frame(result: RanksResult, view: str, timeunit: str = "ns") -> pl.DataFrame:
    """The frame ``view`` (one of :data:`VIEWS`, or ``set_aside``) names, times in ns; the
    matrix's already in ``timeunit`` (:func:`step_matrix_in`), which the renderers then
    leave as it is."""
    if view == "matrix":
        return step_matrix_in(result, timeunit)
    frames = {
        "ranks": result.ranks,
        "steps": result.steps,
        "stragglers": result.step_stragglers,
        "collectives": result.collectives,
        "waits": result.waits,
        "clock": result.clock,
        "inconsistencies": result.inconsistencies,
        "failures": result.failures,
    }
    if view == "set_aside":
        from .processes import set_aside_frame

        return set_aside_frame(result.set_aside)
    return frames[view]


def step_matrix_in(result: RanksResult, timeunit: str) -> pl.DataFrame:
    """:meth:`RanksResult.step_matrix` of step durations with its ``step_<n>_ns`` columns
    converted to ``timeunit`` (``step_<n>_ms``...): the same values as converting the matrix,
    but converted while they are one column of the steps and pivoted after. The conversion
    (``render.convert_times``) costs about a millisecond per column, and the matrix has a
    column per step: 4.3 CPU s of ``--view matrix -f csv --timeunit ms`` on the 13 shared
    traces as ranks (4,095 steps in one), against 0.1 s for one column."""
    import polars as pl

    if timeunit == "ns" or result.steps.is_empty():
        return result.step_matrix()
    value = f"duration_{timeunit}"
    steps = render.convert_times(result.steps.select("rank", "step", "duration_ns"), timeunit)
    wide = steps.select(
        "rank", pl.format("step_{}_" + timeunit, "step").alias("col"), pl.col(value)
    ).pivot(on="col", index="rank", values=value)
    return every_rank(wide, result.ranks)


def render_ranks(
    result: RanksResult,
    *,
    fmt: str,
    timeunit: str = "ns",
    table: str | None = None,
    width: int = render.DEFAULT_WIDTH,
    color: bool = False,
) -> str:
    """The result in ``fmt`` (table, csv, json, markdown). Without ``table`` (one of
    :data:`VIEWS`, the frame to show alone): table and
    markdown give the findings, the per-rank table, the stragglers per step and the clock
    corrections; csv gives the per-rank table; json every frame (the views and
    ``set_aside``). ``width`` and ``color``
    are the terminal's, for tables."""
    look = {"width": width, "color": color}
    if table is not None:
        frame = view_frame(result, table, timeunit)
        return _frame(frame, fmt=fmt, timeunit=timeunit, title=table, **look)
    if fmt == "csv":
        return _frame(result.ranks, fmt="csv", timeunit=timeunit)
    if fmt == "json":
        return _json(result, timeunit)
    return _sections(result, fmt, timeunit, look)


def _frame(df: pl.DataFrame, *, fmt: str, timeunit: str, title: str | None = None, **look) -> str:
    """``render.frame``, with the :data:`_INSTANTS` of ``df`` kept in ns."""
    if timeunit == "ns" or not any(c in df.columns for c in _INSTANTS):
        return render.frame(df, fmt=fmt, timeunit=timeunit, title=title, **look)
    data = _in_unit(df, timeunit)
    if fmt in ("csv", "json"):
        return render.csv(data) if fmt == "csv" else render.json(data)
    if fmt == "markdown":
        return render.markdown(data, timeunit=timeunit, title=title)
    return render.table(data, timeunit=timeunit, title=title, **look)


def _in_unit(df: pl.DataFrame, timeunit: str) -> pl.DataFrame:
    """``render.convert_times`` of ``df`` but for its :data:`_INSTANTS`, left as they are
    (integer ns), in their places."""
    kept = [(i, c) for i, c in enumerate(df.columns) if c in _INSTANTS]
    if timeunit == "ns" or not kept:
        return render.convert_times(df, timeunit)
    data = render.convert_times(df.drop(c for _, c in kept), timeunit)
    for i, c in kept:
        data.insert_column(i, df[c])
    return data


def _headline(result: RanksResult) -> str:
    n = result.ranks.height
    text = f"{n} rank{'s' if n != 1 else ''} analysed"
    if sources := result.rank_sources():
        named = ", ".join(f"{s} ({k})" if len(sources) > 1 else s for s, k in sources)
        text += f" (rank numbers from: {named})"
    if result.missing_ranks:
        text += f"; missing: {rank_list(result.missing_ranks)}"
    return text


def _sections(result: RanksResult, fmt: str, timeunit: str, look: dict) -> str:
    md = fmt == "markdown"
    out = [f"**{_headline(result)}**\n" if md else f"ranks: {_headline(result)}\n"]
    for finding in result.findings:
        out.append(f"- {render.md_text(finding) if md else finding}\n")
    for row in result.failures.iter_rows(named=True):
        # a file name can hold line breaks: shown as \x0a, as the escapes of the rest
        line = f"failed: {printable(row['path'])}: {row['reason']}"
        out.append(f"- {render.md_text(line)}\n" if md else f"{line}\n")
    shown = [c for c in _OVERVIEW if c in result.ranks.columns]
    sections = [
        (result.ranks.select(shown), "per rank"),
        _costliest_steps(result.step_stragglers),
        (result.clock, "clock alignment"),
    ]
    for df, title in sections:
        if df.height:
            out.append("\n")
            out.append(render.frame(df, fmt=fmt, timeunit=timeunit, title=title, **look))
    return "".join(out)


def costliest_steps(stragglers: pl.DataFrame, limit: int) -> pl.DataFrame:
    """At most ``limit`` rows of :attr:`RanksResult.step_stragglers`: the steps whose
    straggler made the others wait longest (ties: the widest spread of active time, then
    the earliest step), in step order. A straggler in step 3,000 of a long run is listed,
    not cut off after the first steps."""
    import polars as pl

    if stragglers.height <= limit:
        return stragglers
    spread = pl.col("slowest_active_ns") - pl.col("median_active_ns")
    return (
        stragglers.sort(
            [pl.col("caused_ns"), spread, pl.col("step")],
            descending=[True, True, False],
            nulls_last=True,
        )
        .head(limit)
        .sort("step")
    )


def _costliest_steps(stragglers: pl.DataFrame) -> tuple[pl.DataFrame, str]:
    """The summary's straggler table (``straggler_steps_shown`` rows at most, see
    data/ranks.toml) and its title."""
    from .rules import ranks_rules

    limit = ranks_rules().straggler_steps_shown
    if stragglers.height <= limit:
        return stragglers, "stragglers per step"
    title = (
        f"stragglers per step: the {limit} costliest of {stragglers.height:,} steps (longest "
        "wait caused, then widest spread of active time; all: --view stragglers)"
    )
    return costliest_steps(stragglers, limit), title


def _json(result: RanksResult, timeunit: str) -> str:
    doc = {
        "ranks_analysed": result.ranks.height,
        "missing_ranks": list(result.missing_ranks),
        "reference_rank": result.reference_rank,
        "rank_sources": dict(result.rank_sources()),
        "findings": list(result.findings),
    }
    for view in _JSON_FRAMES:
        doc[view] = json.loads(render.json(_in_unit(view_frame(result, view, timeunit), timeunit)))
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"
