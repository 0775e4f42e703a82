"""The GPU work of steps: selecting it (``--step N`` / ``--steps A:B``, ``step=``), what
runs in each step (its top kernels), and the pacing of the steps over the capture.

A step's work is what :mod:`tracelens.steps` counts for it: for NVTX steps, the GPU
operations whose launching API call starts inside the step's range on its thread
(``queries/steps_range_work.sql``); for steps from the launch-sequence period, each
device's operations from the step's first kernel to the next step's
(``queries/steps_window_work.sql``). Both list every operation with its step, so one
query serves the selection (:func:`select_steps`, through
:func:`tracelens.filters.select_work`) and the per-step top kernels.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .errors import UsageError
from .filters import EventFilter
from .steps import Steps, _list, find_steps
from .units import fmt_ns

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

__all__ = ["StepSelection", "pacing", "parse_step_spec", "select_steps", "step_report"]


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
        raise UsageError(
            f"{{param}} {spec!r}: use N or A:B (1-based step numbers)", param="step"
        ) from None
    if ":" not in text and first < 1:
        raise UsageError(f"{{param}} {spec!r}: step numbers start at 1", param="step")
    if first < 1 or last < first:
        raise UsageError(f"{{param}} {spec!r}: need 1 <= A <= B", param="steps")
    return first, last


def _steps_label(first: int, last: int) -> str:
    return f"step {first}" if first == last else f"steps {first} to {last}"


def _list_label(steps: list[int]) -> str:
    return f"step{'s' if len(steps) > 1 else ''} {_list(steps)}"


@dataclass(frozen=True)
class WindowCut:
    """How an asked --start/--end window cuts the asked steps: ``text`` names the window
    (``window 2.00 ms–9.00 ms``), ``held`` the asked steps whose GPU span meets it, ``part``
    those of them it holds only in part (their work outside the window is left out)."""

    text: str
    held: tuple[int, ...]
    part: tuple[int, ...]

    def phrase(self) -> str:
        """`` within the window …, which holds …`` for the note."""
        held = f"{_list_label(list(self.held))}"
        if self.part:
            whole = sorted(set(self.held) - set(self.part))
            held = f"{_list_label(whole)} whole and " if whole else ""
            held += f"{_list_label(list(self.part))} only in part"
        return f" within the {self.text}, which holds {held}"


@dataclass(frozen=True)
class StepSelection:
    """What :func:`select_steps` selected. ``where``: the filter narrowed to the GPU work of
    steps ``first`` to ``last`` (inclusive, 1-based); ``steps``: every step found (how, in
    ``steps.detail``); ``selected``: how many of the asked steps hold work that passes the
    filter's device, process and stream and whose GPU span (the steps table's start to end)
    meets the filter's window (a step number with no GPU work is not counted; neither the
    window nor the selection, --nvtx, renumbers them); ``filtered``: whether the filter kept
    only part of the trace's work; ``window``: how the asked window cut the asked steps."""

    where: EventFilter
    first: int
    last: int
    steps: Steps
    selected: int
    filtered: bool = False
    #: the asked --start/--end window that leaves some asked step out or cuts one (the
    #: window's text, the steps it holds, those it holds only in part); None otherwise
    window: WindowCut | None = None

    def note(self, per_step: bool = False) -> str:
        """One line for the output: which steps, of how many (numbered 1 to N; the numbers
        that hold no GPU work said), found how (``per_step``: and that the figures are
        divided by the number of steps, warm-up set aside or not)."""
        found = self.steps
        numbers = sorted(found.frame["step"].unique().to_list())
        top = numbers[-1]
        which = f"{_steps_label(self.first, self.last)} of {top:,}"
        how = f"steps from {found.source}"
        empty = sorted(set(range(1, top + 1)) - set(numbers))
        if empty:
            passing = " that passes the filters" if self.filtered else ""
            how = f"{_list_label(empty)} held no GPU work{passing}; {how}"
        if self.window is not None:
            which += self.window.phrase()
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
    ``trace.steps(range)``: the steps of the whole trace, searched without ``where``'s
    device, process, stream, selection and window (step numbers are the trace's, those
    ``tracelens steps`` prints, and its kept steps serve; searched within a filter, the
    filtered work's own ranges or period would become the steps, numbered from 1), then
    intersected with them: a step that holds none of the filtered work is an error, and so
    are steps whose GPU work lies outside the window; a window that cuts a step keeps the
    step's work in it, as the note says. The work is selected (:func:`tracelens.filters.
    select_work`): for steps from NVTX ranges, the work whose launching API call starts
    inside the step's range on its thread (as the steps table counts it;
    ``queries/steps_range_work.sql``); for steps from the launch-sequence period, each
    device's operations from the step's first kernel to the next step's
    (``queries/steps_window_work.sql``). This is not a time window: work launched in step 3
    that runs while step 4's ranges are open stays in step 3; the window is set to the
    selected work's GPU span too (util's span, :func:`filters.window_to_selection`), within
    ``where``'s own window.

    UsageError when the trace has no steps, fewer steps than asked, the asked steps lie
    outside ``where``'s window or hold no GPU work that passes ``where``."""
    import polars as pl

    from .filters import window_to_selection

    if spec is not None:
        first, last = parse_step_spec(spec)
    where = where or EventFilter()
    found = find_steps(trace, range=range)  # the trace's steps: see the docstring
    if not found.count:
        raise UsageError(f"{trace.path}: no steps to select: {found.detail}")
    if spec is None:
        # after every device's warm-up (a device's steps are its own iterations, but a
        # step number is one selection over the devices)
        warm = found.frame.group_by("step").agg(pl.col("warmup").any())
        steady = warm.filter(~pl.col("warmup")) if not warm["warmup"].all() else warm
        first, last = int(steady["step"].min()), int(found.frame["step"].max())
    label = _steps_label(first, last)
    low, top = int(found.frame["step"].min()), int(found.frame["step"].max())
    if last > top:
        # as asked: --step 9 (said '--steps 9:9'), or --steps 3:9
        asked, param = (f"{first}", "step") if first == last else (f"{first}:{last}", "steps")
        raise UsageError(
            f"{trace.path}: {{param}} {asked}: the trace has steps {low} to {top}", param=param
        )
    chosen = found.frame.filter(pl.col("step").is_between(first, last))
    if where.device is not None:
        chosen = chosen.filter(pl.col("device") == where.device)
    if chosen.is_empty():
        raise UsageError(f"{trace.path}: {label} launched no GPU work that passes the filters")
    window = where.asked_window or (where.start_ns, where.end_ns)
    held, cut = _in_window(trace, chosen, window)
    query, bounds, params = _step_work(found, first, last, where)
    with _registered(trace, bounds):
        narrowed, held = _passing(trace, where, held, query, params)
    if not trace.query_rows("_selection_size", selection=narrowed.selection).data[0][0]:
        if where.selection is None:
            raise UsageError(f"{trace.path}: {label} launched no GPU work that passes the filters")
        raise UsageError(
            f"{trace.path}: none of the GPU work of {label} is in the rest of the selection"
        )
    _check_window(trace, narrowed, window, label, chosen)
    narrowed = window_to_selection(trace, narrowed)
    return StepSelection(narrowed, first, last, found, len(held), not where.is_whole(), cut)


def _passing(
    trace: Trace, where: EventFilter, held: list[int], query: str, params: dict[str, Any]
) -> tuple[EventFilter, list[int]]:
    """``where`` narrowed to the selected steps' work on its device, of its process and on
    its stream (``query`` with ``params``: the step work query, which filters them in its
    one pass over the work), and the steps of ``held`` that hold some of it: with a
    process or a stream, counted from that work
    (``queries/steps_selected_steps.sql``; the steps table does not say which process or
    stream a step's work is on). Needs ``step_bounds`` registered."""
    from . import _resources
    from .filters import select_work

    if where.pid is None and where.stream is None:
        return select_work(trace, query, where, **params), held
    con = trace.db
    con.execute("CREATE OR REPLACE TEMP TABLE step_work AS " + _resources.query(query), params)
    try:
        narrowed = select_work(trace, con.table("step_work"), where)
        holding = trace.query("steps_selected_steps", selection=narrowed.selection)
    finally:
        con.execute("DROP TABLE IF EXISTS step_work")
    return narrowed, [s for s in held if s in set(holding["step"].to_list())]


def _check_window(
    trace: Trace,
    narrowed: EventFilter,
    window: tuple[int | None, int | None],
    label: str,
    chosen: pl.DataFrame,
) -> None:
    """UsageError when none of the selected work runs in the asked ``window``, though the
    steps' GPU span on some device meets it (:func:`_in_window`; ``chosen``: their rows of
    the steps table): the device idles through the whole window, or the work there is
    another process's or stream's. The message gives each device's span of the steps."""
    t0, t1 = window
    if t0 is None and t1 is None:
        return
    filters = {"device": narrowed.device, "pid": narrowed.pid, "stream": narrowed.stream}
    inside = trace.query_rows(
        "_selection_passing_size", selection=narrowed.selection, start_ns=t0, end_ns=t1,
        **filters,
    ).data[0][0]  # fmt: skip
    if inside:
        return
    one = label.startswith("step ")
    raise UsageError(
        f"{trace.path}: {label} {'has' if one else 'have'} no GPU work in the "
        f"{_window_text(t0, t1)}: {'its' if one else 'their'} GPU work runs {_runs(chosen)} "
        "from session start"
    )


def _in_window(
    trace: Trace, chosen: pl.DataFrame, window: tuple[int | None, int | None]
) -> tuple[list[int], WindowCut | None]:
    """The steps of ``chosen`` (the asked steps' rows of the steps table, one per step and
    device) whose GPU span on some device is in ``window`` (as an event passes it:
    :func:`tracelens.filters.in_window`, nsys's rule), and how the window cuts them (None
    when it holds every one whole). A step's span over its devices is not enough: its work
    on one device can end before the window and on another start after it. UsageError
    when it holds none: the steps are the trace's, searched without the window, so a
    window elsewhere in the capture is not a window on their work."""
    import polars as pl

    from .filters import in_window

    t0, t1 = window
    if t0 is None and t1 is None:
        return sorted(chosen["step"].unique().to_list()), None
    meets = in_window(pl.col("start_ns"), pl.col("end_ns"), t0, t1)
    spans = (
        chosen.group_by("step")
        .agg(pl.col("start_ns").min(), pl.col("end_ns").max(), meets=meets.any())
        .sort("step")
    )
    starts_late = pl.col("start_ns") < t0 if t0 is not None else pl.lit(False)
    ends_late = pl.col("end_ns") > t1 if t1 is not None else pl.lit(False)
    inside = spans.filter("meets")
    text = _window_text(t0, t1)
    if inside.is_empty():
        first, last = spans["step"].min(), spans["step"].max()
        one = first == last
        raise UsageError(
            f"{trace.path}: {_steps_label(first, last)} {'is' if one else 'are'} outside the "
            f"{text}: {'its' if one else 'their'} GPU work runs {_runs(chosen)} "
            "from session start"
        )
    held = inside["step"].to_list()
    part = inside.filter(starts_late | ends_late)["step"].to_list()
    if len(held) == spans.height and not part:
        return held, None
    return held, WindowCut(text, tuple(held), tuple(part))


def _runs(chosen: pl.DataFrame) -> str:
    """Where the steps of ``chosen`` (rows of the steps table) ran: '3.05 ms–3.35 ms', or on
    several devices '3.05 ms–3.35 ms on device 0 and 3.55 ms–3.85 ms on device 1'."""
    import polars as pl

    spans = (
        chosen.group_by("device")
        .agg(pl.col("start_ns").min(), pl.col("end_ns").max())
        .sort("device")
    )
    if spans.height == 1:
        return f"{fmt_ns(spans['start_ns'][0])}–{fmt_ns(spans['end_ns'][0])}"
    return " and ".join(
        f"{fmt_ns(start)}–{fmt_ns(end)} on device {device}" for device, start, end in spans.rows()
    )


def _window_text(t0: int | None, t1: int | None) -> str:
    """The window as :func:`tracelens.hints.why_empty` names it."""
    if t0 is None:
        return f"window until {fmt_ns(t1)}"
    if t1 is None:
        return f"window from {fmt_ns(t0)}"
    return f"window {fmt_ns(t0)}–{fmt_ns(t1)}"


def _period_windows(frame: pl.DataFrame, first: int, last: int, loop_pids: pl.Expr) -> pl.DataFrame:
    """One window per device and step in [first, last] (device, step, start, end, pids): from the
    step's first kernel start to the next step's first kernel start on that device, in
    time (the step's end + 1 when none follows). In time, not by number: with several
    processes on a device their steps are numbered one process after another
    (:func:`tracelens.steps_order.process_ranks`) and run at once, and the windows of a
    device must not overlap (a process's last step would end where the next process's
    first began, before it: an empty window). pids: ``loop_pids`` (:meth:`Steps.loop_pids`),
    the loop's processes on a device another program used too, whose work alone is the
    steps'; NULL: every process's."""
    import polars as pl

    return (
        frame.sort("device", "start_ns", "step")
        .with_columns(next_start=pl.col("start_ns").shift(-1).over("device"))
        .filter(pl.col("step").is_between(first, last))
        .select(
            "device",
            "step",
            start="start_ns",
            end=pl.coalesce("next_start", pl.col("end_ns") + 1),
            pids=loop_pids,
        )
    )


def _step_work(
    found: Steps, first: int, last: int, where: EventFilter | None = None, window: bool = False
) -> tuple[str, pl.DataFrame, dict[str, Any]]:
    """The query that lists the GPU work of steps [first, last] with its step number, the
    step bounds it reads (registered as ``step_bounds``, see :func:`_registered`) and its
    parameters: NVTX steps by their ranges, period steps by their windows; the work on
    ``where``'s device, of its process and on its stream only (None: all of it); with
    ``window``, only the work that passes ``where``'s --start/--end window too, read so in
    the one pass over the work (``tracelens steps --start/--end`` counts nothing else;
    --step N selects a step's whole work and cuts it to the window afterwards)."""
    ids: dict[str, Any] = {"device": None, "pid": None, "stream": None}
    if where is not None:
        ids = {"device": where.device, "pid": where.pid, "stream": where.stream}
    ids |= {"start_ns": None, "end_ns": None}
    if window and where is not None:
        ids |= {"start_ns": where.start_ns, "end_ns": where.end_ns}
    if found.ranges is None:
        windows = _period_windows(found.frame, first, last, found.loop_pids())
        return "steps_window_work", windows, ids
    bounds = found.ranges.select(
        "step", globalTid="global_tid", start="cpu_start_ns", end="cpu_end_ns"
    )
    return "steps_range_work", bounds, {"first": first, "last": last, **ids}


@contextmanager
def _registered(trace: Trace, bounds: pl.DataFrame):
    """``bounds`` visible to the step work queries as the relation ``step_bounds`` (binding
    thousands of steps as list parameters cost seconds)."""
    con = trace.db
    con.register("step_bounds", bounds)
    try:
        yield
    finally:
        con.unregister("step_bounds")


def step_report(
    trace: Trace,
    range: str | None = None,  # noqa: A002
    where: EventFilter | None = None,
    top_kernels: int = 3,
) -> Steps:
    """``trace.steps(range, where)`` with ``top_kernels`` set: per step and device, the
    ``top_kernels`` kernels with the most GPU time in the step (the work the step launched,
    as :func:`select_steps` selects it; 0: none). With a filter, the trace's steps
    restricted to it, and the top kernels of their work that passes
    (:func:`tracelens.steps_within.steps_within`)."""
    from .steps_kept import keep_top_kernels, kept_top_kernels
    from .steps_ranges import ranked_kernels

    where = where or EventFilter()
    if not where.is_whole():
        from .steps_within import steps_within

        return steps_within(trace, range=range, where=where, top_kernels=top_kernels)
    found = find_steps(trace, range=range, count_kernels=top_kernels > 0)
    if not found.count or top_kernels < 1:
        return found
    if found.kernel_totals is not None:
        top = ranked_kernels(trace, found.kernel_totals, top_kernels)
        return replace(found, top_kernels=top)
    kept = kept_top_kernels(trace, top_kernels) if range is None else None
    if kept is not None:
        return replace(found, top_kernels=kept)
    top = _top_kernels(trace, found, top_kernels, where)
    if range is None:  # the whole trace's steps: kept for a later run (steps_kept)
        keep_top_kernels(trace, top_kernels, top)
    return replace(found, top_kernels=top)


def _top_kernels(trace: Trace, found: Steps, top_kernels: int, where: EventFilter) -> pl.DataFrame:
    """:func:`step_report`'s top kernels of ``found``'s steps, ranked by a query over the
    steps' bounds (:func:`_step_work`)."""
    _query, bounds, _params = _step_work(
        found, int(found.frame["step"].min()), int(found.frame["step"].max())
    )
    # One query over the bounds, no step_work table of every operation (NVTX steps: 5.6 CPU
    # s on 5M kernels; period steps, each kernel placed by its own start: 1.5 of 2.6 s on the
    # 5M-launch loop trace, cached, and no join of the kernels with it by correlation id)
    query = "steps_range_top_kernels" if found.ranges is not None else "steps_top_kernels"
    with _registered(trace, bounds):
        return trace.query(query, top=top_kernels, **where.params())


#: Sparkline levels, lowest first.
_BARS = "▁▂▃▄▅▆▇█"


def pacing(steps: Steps, width: int = 60) -> str:
    """Step time over the capture as a sparkline: one character per step in order (the
    slowest device's duration), scaled from 0 to the slowest step; with more steps than
    ``width``, each character is the slowest of consecutive steps. Empty without steps."""
    import polars as pl

    durations = (
        steps.frame.group_by("step").agg(pl.col("duration_ns").max()).sort("step")["duration_ns"]
    ).to_list()
    if not durations:
        return ""
    per = -(-len(durations) // max(width, 1))
    peaks = [max(durations[i : i + per]) for i in range(0, len(durations), per)]
    top = max(peaks) or 1
    return "".join(_BARS[min(len(_BARS) - 1, int(d * len(_BARS) / top))] for d in peaks)
