"""What the page shows about one trace, gathered from the library's public analyses (census,
lineup, stakeout, danger, memory, the timeline's activity) and shaped into rows for the
templates. No SQL here: every number comes from a function any user can call. Each section's
rows are built in its own module (header, kernelview, stakeoutview, dangerview,
timekeeping); this one puts them together."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from ..errors import MissingDataError
from . import svg
from .dangerview import danger_left_out, danger_rows, danger_rule_notes
from .header import gpu_kinds, header_rows
from .kernelview import (
    CategoryRow,
    KernelRow,
    category_chart,
    category_rows,
    kernel_chart,
    kernel_rows,
    kernels_left_out,
    no_kernels_reason,
)
from .omitted import Omitted
from .stakeoutview import STAKEOUT_KERNELS, StakeoutRow, stakeout_rows
from .stakeoutview import profiles as stakeout_profiles
from .timekeeping import (
    TimeKeeping,
    memory_util,
    projection_left_out,
    step_rows,
    timekeeping,
    util_rows,
)

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

    from ..compare.collect import Side as DiffSide
    from ..filters import EventFilter
    from ..stakeout import KernelProfiles
    from ..steps import Steps
    from ..trace import Trace
    from .aside import Aside
    from .layout import TimelineView
    from .nvtxtree import NvtxTree
    from .selection import Selection


@dataclass
class Side:
    """One trace, as the page shows it."""

    key: str  # "a" / "b" / "t": prefix of section ids
    label: str
    info: Any
    has_kernels: bool
    totals: dict[str, Any]
    kernels: list[KernelRow]
    kernels_total: int
    kernel_time_ns: int
    categories: list[CategoryRow]
    kernel_chart: Markup
    category_chart: Markup
    stakeout: list[StakeoutRow]
    timeline: TimelineView | None
    danger: list[dict[str, Any]]
    danger_rules: list[dict[str, Any]]  # each rule of ``danger`` once, with its why and fix
    memory: list[dict[str, Any]]
    header: list[tuple[str, str]]
    gpus: list[str]
    notes: list[str]
    lineup_total_ns: int = 0  # what the lineup's shares are of: kernels + memcpy + memset
    util: list[dict[str, Any]] = field(default_factory=list)  # trace.util(), one row per device
    steps: Steps | None = None  # trace.steps()
    step_rows: list[dict[str, Any]] = field(default_factory=list)  # what the steps table shows
    step_summary: dict[str, Any] = field(default_factory=dict)
    nvtx: NvtxTree | None = None  # NVTX ranges by path with their GPU time
    profiles: KernelProfiles | None = None  # of the kernels collect_side's ``profile`` names
    # a trace with copies or memsets but no kernel: what each kernel section says instead
    no_kernels: str | None = None


def memory_rows(trace: Trace, where: EventFilter | None = None) -> list[dict[str, Any]]:
    try:
        t = trace.memory_time(where=where)
        s = trace.memory_size(where=where)
    except MissingDataError:
        return []
    sizes = {r["operation"]: r for r in s.iter_rows(named=True)}
    return [
        {
            "operation": r["operation"],
            "count": r["count"],
            "total_ns": r["total_ns"],
            "avg_ns": r["avg_ns"],
            "time_pct": r["time_pct"],
            "bytes": sizes.get(r["operation"], {}).get("total_bytes"),
        }
        for r in t.iter_rows(named=True)
    ]


def require_gpu_work(trace: Trace) -> None:
    """Raise MissingDataError (as the census does: :meth:`Trace.require_kernels`) unless
    the trace has CUDA GPU work for a page of one trace: kernels, or copies or memsets
    without kernels (whose kernel sections then say so). A trace without any (CPU only,
    NVTX only) would be a page of empty sections."""
    if no_kernels_reason(trace) is None:
        trace.require_kernels()


def _has_kernels(trace: Trace, counts: dict[str, int] | None) -> bool:
    """Whether the trace has kernels to chart; ``counts``: its GPU operations
    (:func:`.infoshare.gpu_operation_counts`), None: from its info."""
    try:
        trace.require_kernels()
    except MissingDataError:
        return False
    return (counts["kernel"] if counts is not None else trace.info.count("kernel")) > 0


def collect_side(
    trace: Trace,
    *,
    key: str,
    label: str,
    top: int,
    name_kind: str,
    palette: svg.Palette,
    omitted: list[Omitted],
    stakeout: bool = True,
    read: DiffSide | None = None,
    profile: tuple[list[str], int] | None = None,
    where: EventFilter | None = None,
    selected: str | None = None,
) -> Side:
    """Everything the page shows about one trace. ``read``: what :func:`tracelens.diff`
    read from it (its census, totals and util are not read again). ``profile``: kernel
    names and their launches here, whose profiles (:func:`.stakeoutview.profiles`) are
    read from the page's read while it is held: the diff's stakeout. SQLite's aggregates
    of an export read directly run beside the rest (:mod:`.aside`). ``where``: the GPU work
    every section shows (None: all; the diff's ``read`` was made with it), ``selected``:
    the sentence that says what it selects (the header's 'selected' row)."""
    from .aside import Aside
    from .selection import Selection

    chosen = Selection.of(where, selected)
    with Aside(trace) as aside:
        return _collect(trace, key, label, top, name_kind, palette, omitted, stakeout, read,
                        profile, aside, chosen)  # fmt: skip


def _collect(
    trace, key, label, top, name_kind, palette, omitted, stakeout, read, profile, aside, chosen
):
    """:func:`collect_side`, its SQLite aggregates on ``aside``, of ``chosen``'s work."""
    notes: list[str] = []
    kept_omitted: list[Omitted] = []  # listed after the kernels' and danger's, as read
    # SQLite's aggregates of the top kernels' configurations read the whole export: a
    # selection's are read with the rest (kernel_profiles with its filter)
    early = EarlyStakeout(trace, name_kind, top, aside) if stakeout and chosen.whole else None
    has_kernels, kept, work = _read_work(
        trace, label, name_kind, kept_omitted, read, aside, early, chosen.where
    )
    busy_ns, util, steps, no_kernels = None, None, None, None
    if has_kernels:
        census = _census(trace, name_kind, read, work, kept, chosen.where)
        chosen.require_work(trace, census.height if work is None else work.num_rows)
        line_up = early.kernels if early is not None else None
        categories, kernels, danger = _kernel_sections(
            trace, census, label, top, name_kind, palette, omitted, work, line_up, chosen.where
        )
        kernels_total, kernel_time = census.height, int(census["total_ns"].sum())
    else:
        census, kernels, danger = None, [], []
        kernels_total = kernel_time = 0
        no_kernels, categories, util, work = _without_kernels(
            trace, label, name_kind, palette, kept_omitted, notes, chosen.where
        )
        if no_kernels is not None:
            chosen.require_work(trace, sum(c.calls for c in categories))
        if util is not None:  # the header's busy time, as the utilization table's
            busy_ns = int(util.frame["busy_ns"].sum())
    # a selection's profiles are read with its filter (kernel_profiles), not from SQLite's
    # aggregates of the whole export beside the page's read
    work_for_profiles = work if chosen.whole else None
    picks = _stakeout_picks(
        trace, kernels, name_kind, work_for_profiles, stakeout, profile, aside, early
    )
    if kept is not None:
        busy_ns, util, steps = kept.busy_ns, kept.util, kept.steps
    projection_left_out(util, label, kept_omitted)
    omitted += kept_omitted
    tree = _nvtx_tree(trace, label, omitted, chosen) if has_kernels or no_kernels else None
    steps_shown, steps_summary, steps_left = step_rows(steps)
    if steps_left:
        omitted.append(Omitted(f"{label}: steps", steps_left))
    # before the stakeouts: SQLite's aggregate of their launch configurations runs meanwhile
    timeline = _timeline(trace, key, label, palette, name_kind, steps, work, chosen, omitted, early)
    stake, profiles = [], None
    if has_kernels:
        stake, profiles = _stakeouts(trace, name_kind, palette, work_for_profiles, picks,
                                     chosen.where)  # fmt: skip
    return Side(
        key=key,
        label=label,
        info=trace.info,
        has_kernels=has_kernels,
        totals={"gpu_busy_ns": busy_ns} if has_kernels else {},
        kernels=kernels,
        kernels_total=kernels_total,
        kernel_time_ns=kernel_time,
        categories=categories,
        kernel_chart=kernel_chart(kernels),
        category_chart=category_chart(categories),
        stakeout=stake,
        timeline=timeline,
        danger=danger,
        danger_rules=danger_rule_notes(danger),
        memory=memory_rows(trace, chosen.where),
        header=header_rows(trace, busy_ns, chosen.where, chosen.note),
        gpus=gpu_kinds(trace),
        notes=notes,
        no_kernels=no_kernels,
        lineup_total_ns=sum(c.total_ns for c in categories if c.subfamily is None),
        util=util_rows(util),
        steps=steps,
        step_rows=steps_shown,
        step_summary=steps_summary,
        nvtx=tree,
        profiles=profiles,
    )


def _timeline(trace, key, label, palette, name_kind, steps, work, chosen, omitted, early=None):
    """The page's timeline (:func:`.layout.build_timeline`) of ``chosen``'s work; of a
    selection whose work was not read (left out with util above its limit), none, and
    ``omitted`` says so. ``early``: the :class:`EarlyStakeout` whose census's kernels by
    name id, computed from ``work`` (None: not computed), the timeline's kernel categories
    take instead of scanning the work for them."""
    from .layout import build_timeline

    line_up = early.kernels if early is not None else None

    if chosen.whole or work is not None:
        return build_timeline(
            trace, key=key, palette=palette, name_kind=name_kind, steps=steps, work=work,
            where=chosen.where, name_ids=line_up,
        )  # fmt: skip
    omitted.append(Omitted(f"{label}: timeline", chosen.TIMELINE_NOTE))
    return None


def _without_kernels(trace, label, name_kind, palette, omitted, notes, where=None):
    """What the page shows of a trace without kernels: with GPU memory work, why its kernel
    sections are empty (:func:`.kernelview.no_kernels_reason`), its line-up (copies and
    memsets), util of that work (:func:`.timekeeping.memory_util`) and, of a selection
    (``where``), the work its timeline is drawn from (:func:`.sharedread.for_duckdb`; None
    for the whole trace, whose timeline reads the trace, or where util is left out);
    without any, a note appended to ``notes`` and nothing (None, [], None, None)."""
    from .sharedread import for_duckdb, read_work

    reason = no_kernels_reason(trace)
    if reason is None:
        notes.append(
            "no CUDA kernels in this export (captured without -t cuda, or a CPU-only run): "
            "nothing to chart"
        )
        return None, [], None, None
    categories = category_rows(trace, palette, name_kind, where=where)
    util = memory_util(trace, label, omitted, where)
    work = None
    if util is not None and where is not None and not where.is_whole():
        work = for_duckdb(read_work(trace, short=name_kind == "short", where=where))
    return reason, categories, util, work


def _read_work(
    trace: Trace,
    label: str,
    name_kind: str,
    omitted: list[Omitted],
    read: DiffSide | None,
    aside: Aside,
    early: EarlyStakeout | None = None,
    where: EventFilter | None = None,
):
    """Whether the trace has kernels, what :func:`timekeeping` kept of it (None: no
    kernels, or none kept), and the GPU work it read, for DuckDB to scan (None: not read).
    Without the diff's ``read``, the info's GPU figures come from the page's read of the
    work and its CUDA API calls' from util's (:mod:`.infoshare`; their processes read on
    ``aside``'s thread meanwhile). ``early``: hears of the page's own read as soon as it
    is made (:class:`EarlyStakeout`). ``where``: the work read (None: all); the info's
    figures stay the whole trace's."""
    from .infoshare import gpu_operation_counts, share_info, start_runtime_threads

    whole = where is None or where.is_whole()
    counts = gpu_operation_counts(trace) if read is None else None
    has_kernels = _has_kernels(trace, counts)
    threads = start_runtime_threads(trace, aside) if has_kernels and counts and whole else None
    kept = None
    if has_kernels:
        kept = timekeeping(trace, label, omitted, read, counts, name_kind, early, where)
    work = None
    if kept is not None and kept.work is not None:
        from .sharedread import for_duckdb

        if counts is not None and whole:
            share_info(trace, kept.work, counts, kept.calls, threads)
        work = for_duckdb(kept.work)
        kept.work = None  # the columns for_duckdb leaves out are freed
    return has_kernels, kept, work


class EarlyStakeout:
    """The census and the page's stakeout kernels as soon as the page's own read of the GPU
    work is made (:func:`.timekeeping.timekeeping`'s ``on_read``), before the step search
    and util: SQLite's aggregate of those kernels' launch configurations
    (:func:`.stakeoutread.start_configs`, ~1.6 CPU s on the 5M-kernel trace) then runs on
    ``aside``'s thread beside them, where from the census after them it outlasted the
    timeline it ran beside. ``kernels``: what the line-up takes of the census computed
    here (:func:`.sharedread.census_and_kernels`; None: the census came with the read)."""

    def __init__(self, trace: Trace, name_kind: str, top: int, aside: Aside) -> None:
        self._trace, self._name_kind, self._top, self._aside = trace, name_kind, top, aside
        self.pending = None  # stakeoutread.PendingConfigs, once started
        self.kernels: pl.DataFrame | None = None

    def __call__(self, work: pl.DataFrame, census: pl.DataFrame | None) -> pl.DataFrame | None:
        from .sharedread import SHARED_NAME_KINDS, census_and_kernels, for_duckdb
        from .stakeoutread import start_configs

        if census is None and self._name_kind in SHARED_NAME_KINDS:
            census, self.kernels = census_and_kernels(
                self._trace, for_duckdb(work), self._name_kind
            )
        if census is not None:
            names = census["name"].head(min(self._top, STAKEOUT_KERNELS)).to_list()
            self.pending = start_configs(self._trace, names, self._name_kind, self._aside)
        return census


def _stakeout_picks(trace, kernels, name_kind, work, stakeout, profile, aside, early) -> list:
    """The kernels whose profiles the page shows: ``(names, launches, pending, for the
    page's stakeout)`` for its top kernels (when ``stakeout``) and for the diff's stakeout
    (``profile``: kernel names and their launches here; None or no names: none), with
    SQLite's aggregate of their launch configurations started on ``aside``'s thread where
    the profiles read it (:func:`.stakeoutread.start_configs`; ``early``'s, when it
    started that of the same names)."""
    from .stakeoutread import start_configs

    def started(names: list[str]):
        pending = early.pending if early is not None else None
        if pending is not None and pending.names == tuple(names):
            return pending
        return start_configs(trace, names, name_kind, aside)

    picks = []
    if stakeout and kernels:
        shown = kernels[:STAKEOUT_KERNELS]
        picks.append(([k.name for k in shown], sum(k.calls for k in shown), True))
    if profile is not None and profile[0]:
        picks.append((profile[0], profile[1], False))
    if work is None:
        return [(names, n, None, page) for names, n, page in picks]
    return [(names, n, started(names), page) for names, n, page in picks]


def _stakeouts(trace, name_kind, palette, work, picks, where=None):
    """The page's stakeout rows of its top kernels and the diff's stakeout profiles (None:
    none), of :func:`_stakeout_picks`'s kernels, of their launches ``where`` selects."""
    stake, profiles = [], None
    for names, launches, pending, page in picks:
        found = stakeout_profiles(trace, names, name_kind, launches, work, pending, where)
        if page:
            stake = stakeout_rows([trace], names, name_kind, palette, None, [launches],
                                  [work], given=[found])  # fmt: skip
        else:
            profiles = found
    return stake, profiles


def _kernel_sections(
    trace: Trace,
    census: pl.DataFrame,
    label: str,
    top: int,
    name_kind: str,
    palette: svg.Palette,
    omitted: list[Omitted],
    work: pa.Table | None,
    line_up: pl.DataFrame | None = None,
    where: EventFilter | None = None,
) -> tuple[list[CategoryRow], list[KernelRow], list[dict[str, Any]]]:
    """The line-up's categories, the top kernels and the danger rows of a trace with
    kernels (``census``: its census; ``line_up``: each of its name ids' launches and time,
    when computed with it: :func:`.sharedread.census_and_kernels`); what each table leaves
    out is appended to ``omitted``, kernels first. ``where``: the work shown (None: all)."""
    kernel_time = int(census["total_ns"].sum())
    # the shared read's line-up takes its copies and memsets from the whole trace
    whole = where is None or where.is_whole()
    activities = _lineup_activities(trace, name_kind, work, line_up) if whole else None
    categories = category_rows(trace, palette, name_kind, activities=activities, where=where)
    kernels = kernel_rows(census.head(top), palette, kernel_time)
    kernels_left_out(census, top, label, omitted)
    danger, danger_total = danger_rows(census, top)
    danger_left_out(len(danger), danger_total, label, omitted)
    return categories, kernels, danger


def _census(
    trace: Trace,
    name_kind: str,
    read: DiffSide | None,
    work: pa.Table | None,
    kept: TimeKeeping | None,
    where: EventFilter | None = None,
) -> pl.DataFrame:
    """:meth:`Trace.census`: what the diff read, or the page's read brought (``kept``),
    else from the GPU work the page read (:func:`.sharedread.census`), else read."""
    from .sharedread import SHARED_NAME_KINDS, census

    if read is not None:
        return read.census
    if kept is not None and kept.census is not None:
        return kept.census
    if work is not None and name_kind in SHARED_NAME_KINDS:
        return census(trace, work, name_kind)
    return trace.census(name=name_kind, where=where)


def _lineup_activities(
    trace: Trace, name_kind: str, work: pa.Table | None, line_up: pl.DataFrame | None = None
) -> pl.DataFrame | None:
    """The line-up's input from the GPU work the page read (:func:`.sharedread.lineup_activities`,
    with ``line_up``, its kernels by name id); None: the line-up reads the trace."""
    from .sharedread import SHARED_NAME_KINDS, lineup_activities

    if work is not None and name_kind in SHARED_NAME_KINDS:
        return lineup_activities(trace, work, name_kind, line_up)
    return None


def _nvtx_tree(
    trace: Trace, label: str, omitted: list[Omitted], chosen: Selection
) -> NvtxTree | None:
    """The NVTX tree (of ``chosen``'s ranges: :func:`.nvtxtree.nvtx_tree`, and what it is
    not narrowed to said in ``omitted``), unless the trace has more than
    threshold.nvtx_max_launches kernel launches (data/clues.toml: the GPU projection's
    cost)."""
    from ..compare.clues import threshold
    from .nvtxtree import TREE_NODES, nvtx_tree

    info = trace.info
    limit = int(threshold("nvtx_max_launches"))
    if info.count("kernel") > limit:
        if info.count("nvtx"):
            omitted.append(
                Omitted(
                    f"{label}: NVTX tree",
                    f"left out above {limit:,} kernel launches ({info.count('kernel'):,} "
                    "here): run `tracelens nvtx --gpu --group path`",
                )
            )
        return None
    tree = nvtx_tree(trace, where=chosen.tree_where)
    if tree is not None and tree.left_out:
        omitted.append(
            Omitted(
                f"{label}: NVTX tree",
                f"{tree.left_out:,} of {tree.ranges:,} range paths with less GPU time are not "
                f"drawn (the {TREE_NODES} with the most are): `tracelens nvtx --gpu --group "
                "path` lists them all",
            )
        )
    if tree is not None and chosen.tree_note is not None:
        omitted.append(Omitted(f"{label}: NVTX tree", chosen.tree_note))
    return tree
