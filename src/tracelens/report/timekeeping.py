"""GPU time accounting on the page: the GPU busy time, utilization per device
(:meth:`Trace.util`) and the steps table (:meth:`Trace.steps`), all from one read of the GPU
work, or a note where a trace is too big to sort every GPU operation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..compare.collect import trace_totals
from .omitted import Omitted

if TYPE_CHECKING:
    import polars as pl

    from ..compare.collect import Side as DiffSide
    from ..filters import EventFilter
    from ..steps import Steps
    from ..trace import Trace
    from ..util import Util

# what timekeeping's caller hears of the read as soon as it is made: (work, census) -> census
OnRead = Callable[["pl.DataFrame", "pl.DataFrame | None"], "pl.DataFrame | None"]

STEP_ROWS = 40  # steps listed per trace (outliers and warm-up steps always are)


# trace.util() and trace.steps() sort every GPU operation; above the diff's limit
# (data/clues.toml threshold.util_max_launches, with its reason) the page leaves them out
# and says so.
def _max_operations() -> int:
    from ..compare.clues import threshold

    return int(threshold("util_max_launches"))


def util_rows(util: Util | None) -> list[dict[str, Any]]:
    """:meth:`tracelens.Trace.util` per device, with each part of the span as a share."""
    if util is None:
        return []
    rows = []
    for r in util.frame.iter_rows(named=True):
        span = r["span_ns"] or 1
        parts = {
            "compute": r["compute_ns"],
            "communication": r["exposed_communication_ns"],
            "memory": r["exposed_memory_ns"],
            "idle": r["idle_ns"],
        }
        rows.append({**r, "parts": {k: v / span for k, v in parts.items()}})
    return rows


def projection_left_out(util: Util | None, label: str, omitted: list[Omitted]) -> None:
    """Say in ``omitted`` that util of an --nvtx selection counts span and idle inside the
    selected ranges' GPU projection (:attr:`Util.covered_ns`), as `tracelens util --nvtx`
    says: the page's span is not the window's, nor its idle the time between the ranges."""
    from ..units import fmt_ns

    if util is None or util.covered_ns is None or util.start_ns is None:
        return
    window = fmt_ns((util.end_ns or 0) - util.start_ns)
    omitted.append(
        Omitted(
            f"{label}: utilization",
            "span and idle counted inside the GPU projection of the selected NVTX ranges "
            "(per device, from the first GPU operation launched in a range to the end of the "
            f"last), {fmt_ns(util.covered_ns)} of the {window} window: the time between "
            "them is in neither, as `tracelens util --nvtx` counts them",
        )
    )


def step_rows(steps: Steps | None) -> tuple[list[dict[str, Any]], dict[str, Any], str | None]:
    """The rows of the steps table (the first STEP_ROWS steps, and every outlier or warm-up
    step after them), the summary (:meth:`Steps.summary`, with ``level_shift``:
    :attr:`Steps.level_shift`, None without one), and what was left out."""
    if steps is None or not steps.count:
        return [], {}, None
    frame = steps.frame.sort("step", "device")
    keep = frame.filter((frame["step"] <= STEP_ROWS) | frame["outlier"] | frame["warmup"])
    left = frame["step"].n_unique() - keep["step"].n_unique()
    note = f"{left:,} more steps without anything unusual are not listed" if left else None
    return keep.to_dicts(), steps.summary() | {"level_shift": steps.level_shift}, note


@dataclass
class TimeKeeping:
    """What the page shows of one trace's GPU time: the GPU busy time (util's: the union of
    its kernels, copies, memsets and graph replays per device, summed over devices), :meth:`Trace.util` and :meth:`Trace.steps` (None: left out), and
    the GPU work they were computed from (:func:`.sharedread.read_work`, or what the diff
    read and kept; None: left out), for the other sections to share, and the count, earliest
    start and latest end of every CUDA API call, from util's read of them
    (:func:`tracelens.util.accounting_and_calls`: runtime_calls, first_ns, last_ns; None:
    not read here), for the header; and the census of the kernels when the read brought it
    (:func:`.sharedread.cached_read`; None: the page computes it from the work)."""

    busy_ns: int
    util: Util | None
    steps: Steps | None
    work: pl.DataFrame | None = None
    calls: dict[str, int | None] | None = None
    census: pl.DataFrame | None = None


def timekeeping(
    trace: Trace,
    label: str,
    omitted: list[Omitted],
    read: DiffSide | None = None,
    counts: dict[str, int] | None = None,
    name_kind: str = "demangled",
    on_read: OnRead | None = None,
    where: EventFilter | None = None,
) -> TimeKeeping:
    """The GPU busy time, trace.util() and trace.steps() (those the diff read,
    ``read``, when it did), from one sorted read of the GPU work
    (:func:`tracelens.util.work_in_order`, as the diff reads it): each reading its own cost
    about a census each on millions of launches. Above threshold.util_max_launches GPU
    operations util and steps are None and the page says so. ``counts``: the GPU
    operations of each kind (:func:`.infoshare.gpu_operation_counts`), None: from the
    trace's info. ``name_kind``: the page's names (a cached read brings their census).
    ``on_read(work, census)``: called with the page's own read as soon as it is made
    (before the step search and util; census None where the read brings none), returns
    the census (or None). ``where``: the page's selection (None: the whole trace; the diff's
    ``read`` was made with it)."""
    if counts is None:
        info = trace.info
        counts = {kind: info.count(kind) for kind in ("kernel", "memcpy", "memset")}
    if _left_out(counts["kernel"] + counts["memcpy"] + counts["memset"], label, omitted, where):
        busy = read.totals if read is not None else trace_totals(trace, where)
        return TimeKeeping(busy["gpu_busy_ns"], None, None, _taken_work(trace, read))
    if read is not None and read.util is not None and read.steps is not None:
        work = _taken_work(trace, read)
        return TimeKeeping(read.totals["gpu_busy_ns"], read.util, read.steps, work)
    return _read_once(trace, name_kind, on_read, where)


def memory_util(
    trace: Trace, label: str, omitted: list[Omitted], where: EventFilter | None = None
) -> Util | None:
    """:meth:`Trace.util` of a trace with memory copies or memsets but no kernel (no steps:
    the step search reads kernel launches); None above threshold.util_max_launches GPU
    operations, said in ``omitted`` as :func:`timekeeping` does."""
    info = trace.info
    if _left_out(info.count("memcpy") + info.count("memset"), label, omitted, where):
        return None
    return trace.util(where)


def _left_out(
    ops: int, label: str, omitted: list[Omitted], where: EventFilter | None = None
) -> bool:
    """Whether steps and util are left out of the page for ``ops`` GPU operations (above
    threshold.util_max_launches); if so, ``omitted`` says why. ``where``: the page's
    selection, whose timeline is left out with them (:func:`.collect.collect_side`): the
    note then names no detail window, and the commands with the page's filters."""
    limit = _max_operations()
    if ops <= limit:
        return False
    if where is None or where.is_whole():
        what = f"GPU operations ({ops:,} here"
        see = "; the detail window is the busiest stretch instead of a step"
    else:  # the limit is of the trace's operations, not the selection's
        what, see = f"GPU operations in the trace ({ops:,} here", " with the same filters"
    omitted.append(
        Omitted(
            f"{label}: steps and utilization",
            f"left out above {limit:,} {what}; they sort every operation): run "
            f"`tracelens steps` and `tracelens util`{see}",
        )
    )
    return True


def _taken_work(trace: Trace, read: DiffSide | None) -> pl.DataFrame | None:
    """The GPU work the diff read and kept (``diff(keep_work=True)``), taken off ``read``
    so that the page's sections hold the only reference (freed once they are done), or
    read back from the trace's cache entry, which kept it for the diff (one side's work
    held at a time)."""
    if read is None:
        return None
    work, read.work = read.work, None
    if work is None and read.work_in_entry:
        from ..compare.collect import kept_work

        work = kept_work(trace)
    return work


def _read_once(
    trace: Trace, name_kind: str, on_read: OnRead | None, where: EventFilter | None = None
) -> TimeKeeping:
    """Busy time, util and steps from one read of the GPU work, as the diff's
    :func:`tracelens.compare.collect.collect` shares it; the read is kept for the census
    and the timeline. A trace whose cache entry keeps the diff's read of it reads that back
    (:func:`.sharedread.cached_read`), with the census by ``name_kind``. ``where``: the
    work it selects (None: all), whose steps are the whole trace's restricted to it
    (:func:`tracelens.steps.find_steps`) and whose accounting is not kept."""
    import polars as pl

    from ..steps import find_steps
    from ..steps_order import shares_devices
    from ..util import accounting_and_calls
    from ..util_sweep import KERNEL
    from .sharedread import cached_read, read_work

    whole = where is None or where.is_whole()
    cached = cached_read(trace, name_kind) if whole else None
    if cached is None:
        cached = read_work(trace, short=name_kind == "short", where=where), None
    work_with_streams, census = cached
    if on_read is not None:
        census = on_read(work_with_streams, census)
    work = work_with_streams.drop("stream")
    # correlation_id: the step search reads the launches in the order the host made them
    # (steps_order.host_order), as `tracelens steps` and the diff do.
    launches = work.filter(pl.col("kind") == KERNEL).select(
        "device", "start_ns", "end_ns", "name_id", "correlation_id", "pid"
    )
    if not shares_devices(launches):  # each device one process's: its order needs no pid
        launches = launches.drop("pid")
    # The step search counts graph replays as launches: on a trace that has them it reads
    # its own sequence (the kernels alone would make each step microseconds long).
    replays = trace.graph_replays()[0]
    # a selection's steps: the whole trace's (found from its own read), restricted to it
    steps = find_steps(trace, where=where, launches=None if replays or not whole else launches)
    del launches  # before util's sweeps, which hold their own copy of the work: peak RSS
    # the whole trace's work: through a cache entry its accounting is kept, or read back
    # where util, findings or a diff kept it (util_workfile.keep_accounting)
    util, calls = accounting_and_calls(trace, where, work, keep=whole)
    # GPU busy as util counts it (kernels, copies, memsets, graph replays), as the diff does
    busy_ns = int(util.frame["busy_ns"].sum())
    return TimeKeeping(busy_ns, util, steps, work_with_streams, calls, census)
