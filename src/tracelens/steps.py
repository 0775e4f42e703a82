"""Steps: the iterations of the profiled program, and how regular they are.

Found in this order, and never invented:

1. ``range``: the NVTX ranges whose label matches a glob the user gives;
2. ``marker``: well-known step markers (``ProfilerStep#N``), else a family of top-level
   NVTX ranges of the launching thread (labels equal up to digits: ``decode_step_3``) that
   repeats and launched most of the GPU work (``data/steps.toml``);
3. ``period``: the period of each device's kernel launch sequence: candidate periods come
   from the spacing of kernels that occur once per period, each is verified with one
   vectorized comparison ``name[i] == name[i + p]``, and the steps start after the largest
   idle gap of the motif; near-linear in the number of kernels;
4. ``none``: abstain, saying why.

A step's GPU projection on a device is its GPU work there: from the first operation's start
to the last one's end (for NVTX steps, the work whose launching API call lies inside the
range, on its thread). Warm-up steps (leading outliers) are flagged and set aside; outliers
are judged with the median absolute deviation (``[robust]`` in ``data/steps.toml``).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ._resources import data_dir
from .errors import UsageError
from .filters import EventFilter
from .render import DEFAULT_WIDTH

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

__all__ = [
    "FRAME_COLUMNS",
    "METHODS",
    "StepSelection",
    "Steps",
    "find_steps",
    "parse_step_spec",
    "select_steps",
]

METHODS = ("range", "marker", "period", "none")
#: Columns of :attr:`Steps.frame`, in order (times in ns from session start).
FRAME_COLUMNS = (
    "step",
    "device",
    "start_ns",
    "end_ns",
    "cpu_start_ns",
    "cpu_end_ns",
    "duration_ns",
    "busy_ns",
    "kernels",
    "kernel_ns",
    "warmup",
    "outlier",
)


@lru_cache(maxsize=1)
def settings() -> dict[str, Any]:
    """``data/steps.toml``: markers, range-family and period thresholds, robust cut-offs."""
    with open(data_dir() / "steps.toml", "rb") as fh:
        return tomllib.load(fh)


@dataclass(frozen=True)
class Steps:
    """The steps of a trace (see the module docstring).

    ``frame``: one row per step and device (:data:`FRAME_COLUMNS`). ``method``: how they were
    found (:data:`METHODS`); ``detail``: one sentence saying how, or why there are none.
    ``motif``: for period steps, the kernel names of one period per device.
    """

    method: str
    detail: str
    frame: pl.DataFrame
    motif: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: What the steps were found from, without the counts ("NVTX ranges 'ProfilerStep#*'").
    source: str = ""
    #: For steps from NVTX ranges: one row per step with its range (step, global_tid,
    #: cpu_start_ns, cpu_end_ns), what :func:`select_steps` selects the step's work by.
    ranges: pl.DataFrame | None = field(default=None, repr=False)

    @property
    def count(self) -> int:
        return self.frame["step"].n_unique() if self.frame.height else 0

    @property
    def steady(self) -> pl.DataFrame:
        """The frame without warm-up steps."""
        import polars as pl

        return self.frame.filter(~pl.col("warmup"))

    def _durations(self) -> pl.Series:
        import polars as pl

        # A step lasts as long as its slowest device.
        return self.steady.group_by("step").agg(pl.col("duration_ns").max())["duration_ns"]

    @property
    def median_ns(self) -> float | None:
        return _stat(self._durations(), "median")

    @property
    def mean_ns(self) -> float | None:
        return _stat(self._durations(), "mean")

    @property
    def std_ns(self) -> float | None:
        return _stat(self._durations(), "std")

    @property
    def p90_ns(self) -> float | None:
        d = self._durations()
        return float(d.quantile(0.9, "linear")) if d.len() else None

    def summary(self) -> dict[str, Any]:
        """count, warm-up and outlier step numbers, steady median/mean/std/p90 (ns)."""
        import polars as pl

        flags = self.frame.group_by("step").agg(pl.col("warmup").any(), pl.col("outlier").any())
        return {
            "method": self.method,
            "detail": self.detail,
            "count": self.count,
            "warmup_steps": sorted(flags.filter("warmup")["step"].to_list()),
            "outlier_steps": sorted(flags.filter("outlier")["step"].to_list()),
            "median_ns": self.median_ns,
            "mean_ns": self.mean_ns,
            "std_ns": self.std_ns,
            "p90_ns": self.p90_ns,
        }

    def figures(self) -> dict[str, float]:
        """Figures for gates (``--fail-if``): steps, step_median_ms, step_p90_ms,
        step_std_ms, outlier_steps, warmup_steps; empty without steps."""
        if not self.count:
            return {}
        s = self.summary()
        return {
            "steps": float(s["count"]),
            "step_median_ms": (s["median_ns"] or 0) / 1e6,
            "step_p90_ms": (s["p90_ns"] or 0) / 1e6,
            "step_std_ms": (s["std_ns"] or 0) / 1e6,
            "outlier_steps": float(len(s["outlier_steps"])),
            "warmup_steps": float(len(s["warmup_steps"])),
        }


def _stat(series: pl.Series, how: str) -> float | None:
    if series.len() == 0:
        return None
    if how == "std":
        return float(series.std()) if series.len() > 1 else 0.0
    return float(getattr(series, how)())


# -- finding them -------------------------------------------------------------------------
def find_steps(trace: Trace, range: str | None = None, where: EventFilter | None = None) -> Steps:  # noqa: A002
    """The steps of ``trace`` (see the module docstring); ``range`` is an NVTX label glob.

    Raises MissingDataError without CUDA kernels, UsageError when ``range`` matches no NVTX
    range (naming the closest labels) or when its ranges launched no GPU work."""
    trace.require_kernels()
    where = where or EventFilter()
    params = {"selection": None, **where.params()}
    if range is not None:
        return _range_steps(trace, range, params)
    found = _marker_steps(trace, params)
    if found is not None:
        return found
    from .steps_period import period_steps

    found = period_steps(trace, params, settings())
    if found is not None:
        return found
    return Steps(
        "none",
        "no step structure found: no repeated NVTX range covering most GPU work, and no "
        "periodic kernel launch sequence",
        _empty_frame(),
    )


def _range_steps(trace: Trace, pattern: str, params: dict[str, Any]) -> Steps:
    import difflib

    if not trace.has_table("NVTX_EVENTS"):
        raise UsageError(f"{trace.path}: no NVTX data to match --range {pattern!r}")
    trace.load_nvtx_text()
    frame = trace.query("steps_by_range", pattern=pattern, match="glob", top_level=False, **params)
    if frame.is_empty():
        labels = trace.query("nvtx_labels")["label"].to_list()
        if not trace.query("steps_range_count", pattern=pattern)["ranges"].item():
            close = difflib.get_close_matches(pattern, labels, n=3, cutoff=0.4) or labels[:3]
            hint = f"; closest: {', '.join(repr(x) for x in close)}" if close else ""
            raise UsageError(f"{trace.path}: no NVTX range labelled {pattern!r}{hint}")
        raise UsageError(
            f"{trace.path}: the NVTX ranges labelled {pattern!r} launched no GPU work that "
            "passes the filters"
        )
    ranges = frame["ranges"][0]
    return _finish("range", f"{ranges:,} NVTX ranges labelled {pattern!r}", frame)


def _marker_steps(trace: Trace, params: dict[str, Any]) -> Steps | None:
    if not trace.has_table("NVTX_EVENTS"):
        return None
    trace.load_nvtx_text()
    conf = settings()
    for glob in conf["markers"]["globs"]:
        # Counting the labels is cheap; projecting ranges on the GPU joins every launch.
        if not trace.query_rows("steps_range_count", pattern=glob).data[0][0]:
            continue
        frame = trace.query("steps_by_range", pattern=glob, match="glob", top_level=False, **params)
        if frame["step"].n_unique() >= 2:
            return _finish(
                "marker", f"{frame['ranges'][0]:,} NVTX ranges {glob!r} (step markers)", frame
            )
    families = trace.query("steps_range_families", **params)
    rules = conf["ranges"]
    for row in families.iter_rows(named=True):
        share = row["gpu_ns"] / row["total_gpu_ns"] if row["total_gpu_ns"] else 0.0
        if row["ranges"] < rules["min_repeats"] or share < rules["min_coverage"]:
            continue
        frame = trace.query(
            "steps_by_range", pattern=row["family"], match="family", top_level=True, **params
        )
        if frame["step"].n_unique() < 2:
            continue
        detail = (
            f"{row['ranges']:,} top-level NVTX ranges like {row['example']!r} that launched "
            f"{share:.0%} of the GPU time"
        )
        return _finish("marker", detail, frame)
    return None


def _empty_frame() -> pl.DataFrame:
    import polars as pl

    schema = {c: pl.Int64 for c in FRAME_COLUMNS}
    schema["warmup"] = schema["outlier"] = pl.Boolean
    return pl.DataFrame(schema=schema)


def _finish(method: str, detail: str, frame: pl.DataFrame, motif=None) -> Steps:
    """Flag warm-up and outlier steps and say so in ``detail``."""
    import polars as pl

    ranges = None
    if "global_tid" in frame.columns:
        ranges = frame.select("step", "global_tid", "cpu_start_ns", "cpu_end_ns").unique(
            "step", keep="first", maintain_order=True
        )
    frame = frame.select(FRAME_COLUMNS[:-2])
    per_step = frame.group_by("step").agg(pl.col("duration_ns").max()).sort("step")
    warmup, outlier = flag_steps(per_step["duration_ns"].to_list(), settings()["robust"])
    flags = per_step.select("step").with_columns(
        warmup=pl.Series(warmup, dtype=pl.Boolean), outlier=pl.Series(outlier, dtype=pl.Boolean)
    )
    frame = frame.join(flags, on="step", how="left").sort("step", "device")
    steps = per_step.height
    source = detail
    detail = f"{steps:,} steps from {detail}"
    warm = per_step.filter(flags["warmup"])["step"].to_list()
    if warm:
        detail += f"; warm-up: step{'s' if len(warm) > 1 else ''} {_list(warm)} (slower than the steady state, set aside)"
    odd = per_step.filter(flags["outlier"])["step"].to_list()
    if odd:
        detail += f"; outliers: {_list(odd)}"
    return Steps(method, detail, frame, motif or {}, source, ranges)


def _list(steps: list[int]) -> str:
    shown = ", ".join(str(s) for s in steps[:8])
    return shown + (f" and {len(steps) - 8} more" if len(steps) > 8 else "")


def flag_steps(durations: list[int], robust: dict[str, float]) -> tuple[list[bool], list[bool]]:
    """(warm-up, outlier) flags for step durations in order, by the modified z-score
    (``robust``: z_cutoff, min_steps, max_warmup_fraction, zero_mad_tolerance)."""
    n = len(durations)
    if n < robust["min_steps"]:
        return [False] * n, [False] * n
    med = _median(durations)
    mad = _median([abs(d - med) for d in durations])

    def off(d: float) -> bool:
        if mad == 0:
            return abs(d - med) > robust["zero_mad_tolerance"] * med
        return 0.6745 * abs(d - med) / mad > robust["z_cutoff"]

    warmup = [False] * n
    for i in range(int(n * robust["max_warmup_fraction"])):
        if not (off(durations[i]) and durations[i] > med):
            break
        warmup[i] = True
    outlier = [off(d) and not w for d, w in zip(durations, warmup, strict=True)]
    return warmup, outlier


def _median(values: list[float]) -> float:
    s = sorted(values)
    mid = len(s) // 2
    return float(s[mid]) if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


# -- selecting some ------------------------------------------------------------------------
def parse_step_spec(spec: str | int | tuple[int, int]) -> tuple[int, int]:
    """``"N"`` or ``N`` -> (N, N); ``"A:B"`` or ``(A, B)`` -> (A, B), inclusive and 1-based."""
    if isinstance(spec, tuple) and len(spec) == 2:
        spec = f"{spec[0]}:{spec[1]}"
    text = str(spec).strip()
    try:
        if ":" in text:
            a, b = text.split(":", 1)
            first, last = int(a), int(b)
        else:
            first = last = int(text)
    except ValueError:
        raise UsageError(f"--step/--steps {spec!r}: use N or A:B (1-based step numbers)") from None
    if first < 1 or last < first:
        raise UsageError(f"--steps {spec!r}: need 1 <= A <= B")
    return first, last


def _steps_label(first: int, last: int) -> str:
    return f"step {first}" if first == last else f"steps {first} to {last}"


def _list_label(steps: list[int]) -> str:
    return f"step{'s' if len(steps) > 1 else ''} {_list(steps)}"


@dataclass(frozen=True)
class StepSelection:
    """What :func:`select_steps` selected. ``where``: the filter narrowed to the GPU work of
    steps ``first`` to ``last`` (inclusive, 1-based); ``steps``: every step found (how, in
    ``steps.detail``); ``selected``: how many of the asked steps hold work that passes the
    filter (a step number with no GPU work is not counted)."""

    where: EventFilter
    first: int
    last: int
    steps: Steps
    selected: int

    def note(self, per_step: bool = False) -> str:
        """One line for the output: which steps, of how many, found how (``per_step``: and
        that the figures are divided by the number of steps, warm-up set aside or not)."""
        found = self.steps
        which = f"{_steps_label(self.first, self.last)} of {found.count:,}"
        how = f"steps from {found.source}"
        if not per_step:
            return f"only the GPU work of {which} ({how})"
        warm = found.summary()["warmup_steps"]
        aside = [w for w in warm if w < self.first]
        if aside:
            how += f"; warm-up {_list_label(aside)} set aside"
        elif set(warm) & set(range(self.first, self.last + 1)):
            how += f"; warm-up {_list_label(warm)} included"
        return f"per step: the GPU work of {which}, divided by {self.selected:,} ({how})"


def select_steps(
    trace: Trace,
    spec: str | int | tuple[int, int] | None,
    where: EventFilter | None = None,
    range: str | None = None,  # noqa: A002
) -> StepSelection:
    """``where`` narrowed to the GPU work of steps ``spec`` (``"N"``, ``"A:B"``, N or
    (A, B); None: the steady state, from the first step after the warm-up to the last) of
    ``trace.steps(range, where)``, through the work selection
    (:func:`tracelens.filters.select_work`): for steps from NVTX ranges, the work whose
    launching API call starts inside the step's range on its thread (as the steps table
    counts it; ``queries/steps_range_work.sql``); for steps from the launch-sequence period,
    each device's operations from the step's first kernel to the next step's
    (``queries/steps_window_work.sql``). This is not a time window: work launched in step 3
    that runs while step 4's ranges are open stays in step 3; the window is set to the
    selected work's GPU span too (util's span), within ``where``'s own window.

    UsageError when the trace has no steps, fewer steps than asked, or the asked steps
    hold no GPU work that passes ``where``."""
    from dataclasses import replace

    import polars as pl

    from .filters import select_work

    if spec is not None:
        first, last = parse_step_spec(spec)
    where = where or EventFilter()
    found = find_steps(trace, range=range, where=where)
    if not found.count:
        raise UsageError(f"{trace.path}: no steps to select: {found.detail}")
    if spec is None:
        steady = found.steady if found.steady.height else found.frame
        first, last = int(steady["step"].min()), int(found.frame["step"].max())
    label = _steps_label(first, last)
    low, top = int(found.frame["step"].min()), int(found.frame["step"].max())
    if last > top:
        raise UsageError(
            f"{trace.path}: --steps {first}:{last}: the trace has steps {low} to {top}"
        )
    chosen = found.frame.filter(pl.col("step").is_between(first, last))
    if chosen.is_empty():
        raise UsageError(f"{trace.path}: {label} launched no GPU work that passes the filters")
    if found.ranges is not None:
        r = found.ranges
        narrowed = select_work(
            trace, "steps_range_work", where,
            steps=r["step"].to_list(), tids=r["global_tid"].to_list(),
            starts=r["cpu_start_ns"].to_list(), ends=r["cpu_end_ns"].to_list(),
            first=first, last=last,
        )  # fmt: skip
    else:
        windows = _period_windows(found.frame, first, last)
        narrowed = select_work(trace, "steps_window_work", where, **windows)
    if not trace.query_rows("_selection_size", selection=narrowed.selection).data[0][0]:
        raise UsageError(
            f"{trace.path}: none of the GPU work of {label} is in the rest of the selection"
        )
    # The analysis window becomes the steps' GPU span (util's span, timeline's stretch),
    # inside the window the filter already had.
    t0, t1 = trace.query_rows("_selection_span", selection=narrowed.selection).data[0]
    if where.start_ns is not None:
        t0 = max(t0, where.start_ns)
    if where.end_ns is not None:
        t1 = min(t1, where.end_ns)
    narrowed = replace(narrowed, start_ns=t0, end_ns=max(t0, t1))
    return StepSelection(narrowed, first, last, found, int(chosen["step"].n_unique()))


def _period_windows(frame: pl.DataFrame, first: int, last: int) -> dict[str, list[int]]:
    """Per device, the start of its first selected step's first kernel and the start of the
    first kernel after the selection (its last selected step's end + 1 when none follows)."""
    import polars as pl

    per_device = (
        frame.sort("step")
        .group_by("device", maintain_order=True)
        .agg(
            lo=pl.col("start_ns").filter(pl.col("step").is_between(first, last)).min(),
            next_start=pl.col("start_ns").filter(pl.col("step") > last).min(),
            last_end=pl.col("end_ns").filter(pl.col("step").is_between(first, last)).max(),
        )
        .drop_nulls("lo")
        .sort("device")
    )
    hi = per_device.select(pl.coalesce("next_start", pl.col("last_end") + 1))
    return {
        "devices": per_device["device"].to_list(),
        "starts": per_device["lo"].to_list(),
        "ends": hi.to_series().to_list(),
    }


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
    summary), ``json`` (one object: method, detail, summary, steps, motif) or ``csv`` (the
    steps frame)."""
    import json

    from . import render as r
    from .units import fmt_ns

    if fmt == "csv":
        return r.frame(result.frame, fmt="csv", timeunit=timeunit)
    summary = result.summary()
    if fmt == "json":
        factor = r.TIME_UNITS_NS[timeunit]
        times = {k: v for k, v in summary.items() if k.endswith("_ns")}
        doc = {
            "method": result.method,
            "detail": result.detail,
            "summary": {k: v for k, v in summary.items() if k not in times and k != "detail"}
            | {
                k[: -len("ns")] + timeunit: (None if v is None else v / factor)
                for k, v in times.items()
            },
            "steps": r.convert_times(result.frame, timeunit).to_dicts(),
            "motif": {str(d): list(names) for d, names in result.motif.items()},
        }
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    title = f"steps of {source}: {result.detail}"
    if not result.count:
        return title + "\n"
    stats = (
        f"steady state ({result.steady['step'].n_unique():,} steps): median "
        f"{fmt_ns(summary['median_ns'])}, mean {fmt_ns(summary['mean_ns'])}, std "
        f"{fmt_ns(summary['std_ns'])}, p90 {fmt_ns(summary['p90_ns'])}"
    )
    if fmt == "markdown":
        return r.markdown(
            r.convert_times(result.frame, timeunit), timeunit=timeunit, title=title
        ) + (f"\n{r.md_text(stats)}\n")
    return r.frame(
        result.frame,
        fmt="table",
        timeunit=timeunit,
        title=title,
        caption=stats,
        width=width,
        color=color,
    )
