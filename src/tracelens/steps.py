"""Steps: the iterations of the profiled program, and how regular they are.

Found in this order, and never invented:

1. ``range``: the NVTX ranges whose label matches a glob the user gives;
2. ``marker``: well-known step markers (``ProfilerStep#N``), else a family of top-level
   NVTX ranges of the launching thread (labels equal up to digits: ``decode_step_3``) that
   repeats and launched most of the GPU work (``data/steps.toml``), unless another
   program's launch loop did more of it (:mod:`tracelens.steps_family`);
3. ``period``: the period of each device's kernel launch sequence: candidate periods come
   from the spacing of kernels that occur once per period, each is verified with one
   vectorized comparison ``name[i] == name[i + p]``, and the steps start after the largest
   idle gap of the motif (a shorter motif with optional launches when the host waits as
   long between its repeats; leading iterations that launch more are warm-up);
   near-linear in the number of kernels; devices whose loops are unrelated programs'
   (no kernels nor processes in common) are not numbered alike: the loop with the most GPU
   time is the steps, the others named; of the processes that launched on one device, the
   loop is the one whose steps hold the most launches unless another's steps hold more GPU
   time (a monitor's tiny polls), the other's loop named (:mod:`tracelens.steps_loops`);
4. ``none``: abstain, saying why.

A step's GPU projection on a device is its GPU work there: from the first operation's start
to the last one's end (for NVTX steps, the work whose launching API call lies inside the
range, on its thread). Warm-up steps (leading outliers) are flagged and set aside; outliers
are judged with the median absolute deviation (``[robust]`` in ``data/steps.toml``), and a
level shift in step time is told (``[pacing]``): :mod:`tracelens.steps_pacing`; warm-up
known from what it launches is set aside per device, and steps with optional kernels are
judged against steps of the same shape: :mod:`tracelens.steps_judge`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ._resources import data_dir
from .errors import UsageError
from .filters import EventFilter, closest_labels, glob_regex
from .results import Result
from .steps_family import other_programs_loop
from .steps_open import left_open, quoted
from .steps_outside import Outside
from .steps_pacing import LevelShift, level_shift, shift_index

# imported from here before steps_pacing
from .steps_pacing import flag_steps as flag_steps
from .steps_pacing import warmup_cap_hit as warmup_cap_hit
from .steps_ranges import range_families, range_steps
from .views import plural

if TYPE_CHECKING:
    import polars as pl

    from .compare.gates import Figures
    from .trace import Trace

__all__ = ["FRAME_COLUMNS", "METHODS", "LevelShift", "Steps", "find_steps"]

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
class Steps(Result):
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
    #: For steps from NVTX ranges: one row per range of a step (step, global_tid,
    #: cpu_start_ns, cpu_end_ns; a step is one range per process), what
    #: :func:`select_steps` selects the step's work by.
    ranges: pl.DataFrame | None = field(default=None, repr=False)
    #: With :func:`tracelens.stepwork.step_report`: per step and device the kernels with the
    #: most time in it (step, device, rank, calls, total_ns, time_pct, name); else None.
    top_kernels: pl.DataFrame | None = field(default=None, repr=False)
    #: For steps from NVTX ranges, as the search counted them: per step, device and kernel
    #: (name_id) its launches and their time (step, device, name_id, calls, total_ns), which
    #: :func:`tracelens.stepwork.step_report` ranks; None when not counted (not asked for:
    #: ``find_steps(count_kernels=...)``; overlapping ranges:
    #: :func:`tracelens.steps_ranges.range_steps`; kept steps searched without them).
    kernel_totals: pl.DataFrame | None = field(default=None, repr=False)
    #: The launches in no step (before the first step, between steps, after the last) and
    #: the step ranges left out (other threads': :class:`tracelens.steps_outside.Outside`).
    outside: Outside = field(default_factory=Outside)
    #: For period steps: per device another program used too (launched, or only copied or
    #: set memory, there), the loop's processes (pids), whose work alone is its steps' (a
    #: device not listed: every process's).
    processes: dict[int, tuple[int, ...]] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return self.frame["step"].n_unique() if self.frame.height else 0

    def loop_pids(self) -> pl.Expr:
        """Per row's ``device``: the loop's processes (a list of pids) where another program
        used that device too (:attr:`processes`), else null (every process's work is
        the steps')."""
        import polars as pl

        loop = {d: list(p) for d, p in self.processes.items()}
        return pl.col("device").replace_strict(loop, default=None, return_dtype=pl.List(pl.Int64))

    @property
    def steady(self) -> pl.DataFrame:
        """The frame without warm-up steps."""
        import polars as pl

        return self.frame.filter(~pl.col("warmup"))

    def _durations(self) -> pl.Series:
        import polars as pl

        # A step lasts as long as its slowest device. Sorted by step: a float sum (mean, std)
        # depends on the order it adds in, and a hash group-by's order is the frame's luck.
        per_step = self.steady.group_by("step").agg(pl.col("duration_ns").max())
        return per_step.sort("step")["duration_ns"]

    @property
    def level_shift(self) -> LevelShift | None:
        """Where the steady steps' time shifts level, if it does (:func:`shift_index`)."""
        import polars as pl

        per_step = self.steady.group_by("step").agg(pl.col("duration_ns").max()).sort("step")
        durations = per_step["duration_ns"].to_list()
        at = shift_index(durations, settings()["pacing"])
        return None if at is None else level_shift(per_step["step"].to_list(), durations, at)

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

    def figures(self) -> Figures:
        """Figures for gates (``--fail-if``): steps, step_median_ms, step_p90_ms,
        step_std_ms, outlier_steps, warmup_steps, and the level shift in step time
        (level_shift: the step it changed at, 0 without one; level_shift_ratio: the median
        from it over that before it, 1 without; :func:`tracelens.compare.gates.
        shift_figures`, as the diff's); without steps, none (not measured)."""
        from .compare.gates import SHIFT_FIGURES, STEP_FIGURES, Figures, shift_figures

        if not self.count and self.method != "none":
            # the trace's steps, restricted to a selection none of them holds: counted (0),
            # where a gate 'steps<1' read "not measured: no steps found"
            counted = {"steps": 0.0, "outlier_steps": 0.0, "warmup_steps": 0.0}
            timed = [f for f in (*STEP_FIGURES, *SHIFT_FIGURES) if f not in counted]
            return Figures(counted, dict.fromkeys(timed, "no step holds the selected GPU work"))
        if not self.count:
            return Figures({}, dict.fromkeys((*STEP_FIGURES, *SHIFT_FIGURES), "no steps found"))
        s = self.summary()
        figures = {
            "steps": float(s["count"]),
            "step_median_ms": (s["median_ns"] or 0) / 1e6,
            "step_p90_ms": (s["p90_ns"] or 0) / 1e6,
            "step_std_ms": (s["std_ns"] or 0) / 1e6,
            "outlier_steps": float(len(s["outlier_steps"])),
            "warmup_steps": float(len(s["warmup_steps"])),
        }
        return Figures(figures) | shift_figures(self)

    def tables(self) -> dict[str, pl.DataFrame]:
        """steps (one row per step and device, the main table) and steady (the steps left
        after warm-up and outliers)."""
        return {"steps": self.frame, "steady": self.steady}

    def _summary(self) -> str:
        return f"{self.method}: {self.detail}"


def _stat(series: pl.Series, how: str) -> float | None:
    if series.len() == 0:
        return None
    if how == "std":
        return float(series.std()) if series.len() > 1 else 0.0
    return float(getattr(series, how)())


# -- finding them -------------------------------------------------------------------------
def find_steps(
    trace: Trace,
    range: str | None = None,  # noqa: A002
    where: EventFilter | None = None,
    launches: pl.DataFrame | None = None,
    *,
    count_kernels: bool = False,
) -> Steps:
    """The steps of ``trace`` (see the module docstring); ``range`` is an NVTX label glob.
    ``where``: the steps of the whole trace (the same numbers, those every ``--step N``
    means), restricted to its work (:func:`tracelens.steps_within.restrict`: each step's
    work that passes; steps that hold none left out), never a search inside it.
    ``launches``: the kernels of the whole trace in launch order (device, start_ns, end_ns,
    name_id, as ``queries/steps_launches.sql``) when the caller has already read them
    (the diff reads them once, with util's operations: ``util.work_in_order``); those of
    a filter are not the whole trace's, and not read.
    ``count_kernels``: steps from NVTX ranges also count their kernel totals
    (:attr:`Steps.kernel_totals`, what the top kernels are ranked from; ~0.3-0.5 CPU s on
    5M kernels, so only for callers that rank them).

    The steps of the whole trace (no ``range``, no filter) are kept in the trace's cache
    entry, if any, and read back by later searches (:mod:`tracelens.steps_kept`), also
    when ``launches`` are handed over (then the whole trace's, the same sequence the search
    reads: the report, the fingerprint and the diff of a whole trace read kept steps
    instead of searching, and keep what they found for a later ``tracelens steps``).

    Raises MissingDataError without CUDA kernels, UsageError when ``range`` matches no NVTX
    range (naming the closest labels) or when its ranges launched no GPU work."""
    from . import steps_kept

    trace.require_kernels()
    where = where or EventFilter()
    if not where.is_whole():
        from .steps_within import restrict

        found = find_steps(trace, range, count_kernels=count_kernels)
        return restrict(trace, found, where)
    if range is None and (kept := steps_kept.kept_steps(trace)) is not None:
        return kept
    found = _search(trace, range, launches, count_kernels)
    if range is None:
        steps_kept.keep_steps(trace, found)
    return found


def period_steps_at(trace: Trace, phase: str, where: EventFilter | None = None) -> Steps | None:
    """The steps of the launch period (:func:`find_steps` without step markers) started at
    the launch of kernel ``phase`` in each step, on each device whose motif launches it
    once (:func:`tracelens.steps_phase.rephase`; the others as :func:`find_steps` phases
    them); None without a period. For a trace whose steps :func:`find_steps` finds from
    the period (step markers are not looked for): the diff phases two runs' steps alike.
    ``where``: restricted as :func:`find_steps` restricts them. Never kept: the trace's
    steps stay those :func:`find_steps` finds."""
    from .steps_period import period_steps

    trace.require_kernels()
    params = {"selection": None, **EventFilter().params()}
    found = period_steps(trace, params, settings(), None, phase)
    if found is None or where is None or where.is_whole():
        return found
    from .steps_within import restrict

    return restrict(trace, found, where)


def _search(
    trace: Trace,
    range: str | None,  # noqa: A002
    launches: pl.DataFrame | None,
    count_kernels: bool,
) -> Steps:
    params = {"selection": None, **EventFilter().params()}
    if range is not None:
        return _range_steps(trace, range, params, count_kernels)
    found = _marker_steps(trace, params, count_kernels, launches)
    if found is not None:
        return found
    from .steps_period import period_steps

    found = period_steps(trace, params, settings(), launches)
    if found is not None:
        return found
    return Steps(
        "none",
        "no step structure found: no repeated NVTX range covering most GPU work, and no "
        "periodic kernel launch sequence",
        _empty_frame(),
    )


def _range_steps(trace: Trace, pattern: str, params: dict[str, Any], count_kernels: bool) -> Steps:
    if not trace.has_table("NVTX_EVENTS"):
        raise UsageError(
            f"{trace.path}: no NVTX data to match {{param}} {pattern!r}", param="range"
        )
    trace.load_nvtx_text()
    label_re = glob_regex(pattern)
    frame, ranges, kernel_totals, outside = range_steps(
        trace, label_re, "regex", False, params, count_kernels=count_kernels
    )
    if frame.is_empty():
        labels = trace.query("nvtx_labels")["label"].to_list()
        if not trace.query("steps_range_count", label_re=label_re)["ranges"].item():
            hint = f"; closest: {closest_labels(pattern, labels)}" if labels else ""
            raise UsageError(f"{trace.path}: no NVTX range labelled {pattern!r}{hint}")
        raise UsageError(
            f"{trace.path}: the NVTX ranges labelled {pattern!r} launched no GPU work that "
            "passes the filters"
        )
    detail = f"{plural(frame['ranges'][0], 'NVTX range')} labelled {quoted(pattern)}"
    detail += _processes(ranges)
    cut = left_open(trace, label_re, "regex", False)
    return _finish(
        "range", detail, frame, ranges=ranges, kernel_totals=kernel_totals, cut=cut,
        outside=outside,
    )  # fmt: skip


def _marker_steps(
    trace: Trace, params: dict[str, Any], count_kernels: bool, launches: pl.DataFrame | None
) -> Steps | None:
    if not trace.has_table("NVTX_EVENTS"):
        return None
    trace.load_nvtx_text()
    conf = settings()
    for glob in conf["markers"]["globs"]:
        # Counting the labels is cheap; projecting ranges on the GPU joins every launch.
        label_re = glob_regex(glob)
        if not trace.query_rows("steps_range_count", label_re=label_re).data[0][0]:
            continue
        frame, ranges, totals, outside = range_steps(
            trace, label_re, "regex", False, params, count_kernels=count_kernels
        )
        if frame["step"].n_unique() >= 2 or _one_step_holds_most(trace, frame, conf):
            detail = (
                f"{plural(frame['ranges'][0], 'NVTX range')} {quoted(glob)}{_processes(ranges)}"
            )
            cut = left_open(trace, label_re, "regex", False)
            return _finish(
                "marker",
                f"{detail} (step markers)",
                frame,
                ranges=ranges,
                kernel_totals=totals,
                cut=cut,
                outside=outside,
            )
    # the rows of steps_range_families.sql, and the operations read for them
    families, launched = range_families(trace, params)
    rules = conf["ranges"]
    for row in families.iter_rows(named=True):
        share = row["gpu_ns"] / row["total_gpu_ns"] if row["total_gpu_ns"] else 0.0
        if row["ranges"] < rules["min_repeats"] or share < rules["min_coverage"]:
            continue
        frame, ranges, totals, outside = range_steps(
            trace, row["family"], "family", True, params, launched, count_kernels=count_kernels
        )
        if frame["step"].n_unique() < 2:
            continue
        # another program's loop that did more of the GPU's work is the steps instead
        loop = other_programs_loop(trace, row, ranges, launched, params, launches)
        if loop is not None:
            return loop
        processes = _processes(ranges)
        detail = (
            f"{row['ranges']:,} top-level NVTX ranges like {quoted(row['example'])}{processes}"
            f"{',' if processes else ''} that launched {share:.0%} of the GPU time"
        )
        cut = left_open(trace, row["family"], "family", True)
        return _finish(
            "marker", detail, frame, ranges=ranges, kernel_totals=totals, cut=cut,
            outside=outside,
        )  # fmt: skip
    return None


def _one_step_holds_most(trace: Trace, frame: pl.DataFrame, conf: dict[str, Any]) -> bool:
    """Whether ``frame`` (marker steps' rows) is one step whose kernels hold at least
    ``[markers] single_min_coverage`` of the trace's kernel time: a capture of one profiled
    iteration, whose one marker is its step (the launch period would find the layers
    inside it)."""
    if frame.is_empty() or frame["step"].n_unique() != 1:
        return False
    total = trace.census()["total_ns"].sum()
    share = frame["kernel_ns"].sum() / total if total else 0.0
    return share >= conf["markers"]["single_min_coverage"]


def _processes(ranges: pl.DataFrame) -> str:
    """' in N processes, numbered per process' when the steps' ranges are in more than one
    process (step N is each one's Nth range: of its thread that defines the steps), else
    ''."""
    import polars as pl

    n = ranges.select((pl.col("global_tid") // (1 << 24)).n_unique()).item()
    return f" in {n:,} processes, numbered per process" if n > 1 else ""


def _empty_frame() -> pl.DataFrame:
    import polars as pl

    schema = {c: pl.Int64 for c in FRAME_COLUMNS}
    schema["warmup"] = schema["outlier"] = pl.Boolean
    return pl.DataFrame(schema=schema)


def _finish(
    method: str,
    detail: str,
    frame: pl.DataFrame,
    motif=None,
    ranges: pl.DataFrame | None = None,
    kernel_totals: pl.DataFrame | None = None,
    set_aside: tuple[dict[int, list[int]], str] = ({}, ""),
    shapes: dict[int, tuple[str, ...]] | None = None,
    cut: str = "",
    outside: Outside | None = None,
    source: str | None = None,
    processes: dict[int, tuple[int, ...]] | None = None,
) -> Steps:
    """Flag warm-up and outlier steps and say so in ``detail``
    (:func:`tracelens.steps_judge.judge`). ``ranges``, ``kernel_totals``: for steps from
    NVTX ranges, :attr:`Steps.ranges` and :attr:`Steps.kernel_totals`. ``set_aside``: per
    device, the leading steps known to be warm-up (period steps that launch more than the
    motif) and why; the steps after them are judged by time as any others. ``shapes``: per
    step, the kernels it launches besides the motif (period steps of a motif with optional
    launches), judged against steps of the same shape. ``cut``: what the steps leave out
    because the capture stopped inside it (:func:`tracelens.steps_open.left_open`), said
    after the rest. ``outside``: for steps from NVTX ranges, the launches in no step and the
    ranges left out (:class:`tracelens.steps_outside.Outside`), said before ``cut``; period
    steps say theirs per device in ``detail``. ``source``: :attr:`Steps.source`, when
    ``detail`` holds counts of the whole trace's steps (period steps: 'exactly in 39 of its
    39 steps', which a diff of selected steps would print beside '3 steps'); else
    ``detail``. ``processes``: :attr:`Steps.processes`."""
    from .steps_judge import judge

    frame = frame.select(FRAME_COLUMNS[:-2])
    frame, words = judge(frame, set_aside, shapes or {}, settings())
    steps = frame["step"].n_unique()
    said = outside.words() if outside is not None and ranges is not None else ""
    detail_text = f"{plural(steps, 'step')} from {detail}{words}{said}{cut}"
    return Steps(
        method,
        detail_text,
        frame,
        motif or {},
        detail if source is None else source,
        ranges,
        kernel_totals=kernel_totals,
        outside=outside or Outside(),
        processes=processes or {},
    )


def _list(steps: list[int]) -> str:
    """'1, 2, 3', the first 8 and 'and N more' (:func:`tracelens.steps_judge.step_list`)."""
    from .steps_judge import step_list

    return step_list(steps)
