"""``tracelens steps`` as text: the steps table with how they were found, the summary line
(the steady state, or the two levels of a shifted step time), the pacing sparkline and the
top kernels per step; JSON and CSV (the library's :class:`~tracelens.steps.Steps` in, text
out, as util_text and stakeout_text do for theirs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .render import DEFAULT_WIDTH
from .steps_pacing import shift_fields

if TYPE_CHECKING:
    from .steps import Steps


#: Steps whose top kernels the table and Markdown list (JSON lists every step's).
TOP_KERNEL_STEPS_SHOWN = 24


def renders_top_kernels(fmt: str) -> bool:
    """Whether :func:`render` shows the top kernels in format ``fmt`` (CSV is the steps
    frame alone, so the CLI need not compute them: 3.6 of the 9.3 CPU s of the 5M-kernel
    trace with 2,076 NVTX steps, cached)."""
    return fmt != "csv"


def render(
    result: Steps,
    *,
    fmt: str,
    timeunit: str,
    source: str,
    width: int = DEFAULT_WIDTH,
    color: bool = False,
) -> str:
    """The result as text: ``table``/``markdown`` (how the steps were found, the steps, the
    summary, the pacing sparkline, the top kernels per step when computed), ``json`` (one
    object: method, detail, summary, steps, motif, pacing, top_kernels) or ``csv`` (the
    steps frame)."""
    from . import render as r
    from .stepwork import pacing

    if fmt == "csv":
        return r.frame(result.frame, fmt="csv", timeunit=timeunit)
    if fmt == "json":
        return _json_text(result, timeunit)
    title = f"steps of {source}: {result.detail}"
    if not result.count:
        return title + "\n"
    spark = pacing(result, width=max(10, width - 30))
    per = -(-result.count // len(spark))
    each = "" if per == 1 else f"; each mark the slowest of {per} steps"
    pace = f"pacing (step time in order, from 0 to the slowest step{each}): {spark}"
    sections = [(result.frame, title, _stats_line(result), pace)]
    top = _top_kernels_section(result)
    if top is not None:
        sections.append(top)
    if fmt == "markdown":
        return "\n".join(
            r.markdown(r.convert_times(df, timeunit), timeunit=timeunit, title=t)
            + "".join(f"\n{r.md_text(line)}\n" for line in (c, more) if line)
            for df, t, c, more in sections
        )
    return "\n".join(
        r.frame(df, fmt="table", timeunit=timeunit, title=t, caption=c, width=width, color=color)
        + (f"{more}\n" if more else "")
        for df, t, c, more in sections
    )


def _json_text(result: Steps, timeunit: str) -> str:
    """:func:`render`'s ``json``: times in ``timeunit`` (keys ending ``_ns`` renamed)."""
    import json

    from . import render as r
    from .stepwork import pacing

    summary = result.summary()
    top = result.top_kernels
    factor = r.TIME_UNITS_NS[timeunit]
    times = {k: v for k, v in summary.items() if k.endswith("_ns")}
    doc = {
        "method": result.method,
        "detail": result.detail,
        "summary": {k: v for k, v in summary.items() if k not in times and k != "detail"}
        | {
            k[: -len("ns")] + timeunit: (None if v is None else v / factor)
            for k, v in times.items()
        }
        | {"level_shift": shift_fields(result.level_shift, timeunit)},
        "steps": r.convert_times(result.frame, timeunit).to_dicts(),
        "motif": {str(d): list(names) for d, names in result.motif.items()},
        "outside": result.outside.as_dict(),
        "pacing": pacing(result),
        "top_kernels": None if top is None else r.convert_times(top, timeunit).to_dicts(),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _stats_line(result: Steps) -> str:
    """The summary line under the steps table: the steady state's figures, or, when the step
    time shifted, the two levels first (one median of two levels is a time no step took)."""
    from .units import fmt_ns

    summary = result.summary()
    shift = result.level_shift
    figures = (
        f"median {fmt_ns(summary['median_ns'])}, mean {fmt_ns(summary['mean_ns'])}, std "
        f"{fmt_ns(summary['std_ns'])}, p90 {fmt_ns(summary['p90_ns'])}"
    )
    steady = result.steady["step"].n_unique()
    if shift is None:
        return f"steady state ({steady:,} step{'' if steady == 1 else 's'}): {figures}"
    return (
        f"not steady: {shift.words()} ({shift.before_steps:,} steps before, "
        f"{shift.after_steps:,} from it); all {steady:,} steps: {figures}"
    )


def _top_kernels_section(result: Steps) -> tuple | None:
    """The top kernels per step of the first steps, as a (frame, title, caption, None)
    section of :func:`render`; None when they were not computed or there are none."""
    import polars as pl

    top = result.top_kernels
    if top is None or not top.height:
        return None
    # steps without kernels (a window's step that holds only a copy of it) list none
    with_kernels = sorted(top["step"].unique().to_list())
    steps_shown = with_kernels[:TOP_KERNEL_STEPS_SHOWN]
    n = top["rank"].max()
    caption = f"the {f'{n} kernels' if n > 1 else 'kernel'} with the most time per step and device"
    if len(with_kernels) > len(steps_shown):
        of = f"{len(with_kernels):,}" + (
            " with kernels" if len(with_kernels) < result.count else ""
        )
        caption += f"; the first {len(steps_shown)} steps of {of} (--format json lists all)"
    shown = top.filter(pl.col("step").is_in(steps_shown))
    return (shown, "top kernels per step", caption, None)
