"""What the page shows about one trace, gathered from the library's public analyses (census,
lineup, stakeout, danger, memory, the timeline's activity) and shaped into rows for the
templates. No SQL here: every number comes from a function any user can call."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from ..compare.collect import trace_totals
from ..errors import MissingDataError
from ..units import fmt_bytes, fmt_ns
from . import svg
from .text import DecodedField, category_of, danger_hits, decode, labels, pct, share_pct, short

if TYPE_CHECKING:
    import polars as pl

    from ..compare.collect import Side as DiffSide
    from ..stakeout import KernelProfiles
    from ..steps import Steps
    from ..trace import Trace
    from ..util import Util
    from .layout import TimelineView
    from .nvtxtree import NvtxTree

CHART_ROWS = 12  # bars in a chart
STAKEOUT_KERNELS = 8  # kernels with a duration histogram
PER_OCTAVE = 4  # histogram bins per doubling of duration
STAKEOUT_CONFIGS = 3  # launch configurations listed per kernel and trace
STEP_ROWS = 40  # steps listed per trace (outliers and warm-up steps always are)


# trace.util() and trace.steps() sort every GPU operation; above the diff's limit
# (data/clues.toml threshold.util_max_launches, with its reason) the page leaves them out
# and says so.
def _timekeeping_max_operations() -> int:
    from ..compare.clues import threshold

    return int(threshold("util_max_launches"))


HEADER_PROCESSES = 4  # processes named in the header


@dataclass
class Omitted:
    """Something the page leaves out, said in the page."""

    where: str
    what: str


@dataclass
class KernelRow:
    name: str
    short: str
    category: str
    color: str
    calls: int
    total_ns: int
    share: float
    avg_ns: float
    med_ns: float
    min_ns: int
    max_ns: int
    family: str | None
    fields: list[DecodedField]
    danger: list[Any]


@dataclass
class CategoryRow:
    """A row of ``tracelens lineup`` (:func:`tracelens.lineup.category_summary`): a category,
    or (``subfamily`` set) one part of its breakdown."""

    category: str
    subfamily: str | None
    color: str
    calls: int
    total_ns: int
    time_pct: float  # share of all GPU time (kernels + memcpy + memset), as lineup rounds it
    avg_ns: float
    top_kernel: str


@dataclass
class StakeoutRow:
    name: str
    short: str
    category: str
    color: str
    chart: Markup
    stats_a: dict[str, Any] | None
    stats_b: dict[str, Any] | None
    configs: list[dict[str, Any]]
    configs_more: int
    per_call_ratio: float | None = None
    fields: list[DecodedField] = field(default_factory=list)
    family: str | None = None


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


def gpu_kinds(trace: Trace) -> list[str]:
    """One line per kind of GPU: 'GPU 0: NAME (SMs, memory, sm X.Y)' or 'N × NAME (...)'."""
    kinds: dict[str, list[Any]] = {}
    for g in trace.info.gpus:
        bits = []
        if g.sm_count:
            bits.append(f"{g.sm_count} SMs")
        if g.memory_bytes:
            bits.append(f"{g.memory_bytes / 2**30:.0f} GiB")
        if g.compute_capability:
            bits.append(f"sm {g.compute_capability}")
        text = (g.name or "unknown GPU") + (f" ({', '.join(bits)})" if bits else "")
        kinds.setdefault(text, []).append(g.id)
    return [
        (f"{len(ids)} × " if len(ids) > 1 else f"GPU {ids[0]}: ") + text
        for text, ids in kinds.items()
    ]


def header_rows(trace: Trace, busy_ns: int | None) -> list[tuple[str, str]]:
    """(label, value) rows describing the export."""
    info = trace.info
    started = "—"
    if info.session_start_utc_ns:
        t = _dt.datetime.fromtimestamp(info.session_start_utc_ns / 1e9, tz=_dt.UTC)
        started = t.strftime("%Y-%m-%d %H:%M:%S UTC")
    span = fmt_ns(info.duration_ns)
    if busy_ns:
        span += f" (GPU busy {fmt_ns(busy_ns)})"
    procs = [f"{p.pid} {p.name or ''}".strip() for p in info.processes]
    shown = "; ".join(svg.clip_text(p, 90) for p in procs[:HEADER_PROCESSES]) or "—"
    if len(procs) > HEADER_PROCESSES:
        shown += f"; +{len(procs) - HEADER_PROCESSES} more"
    rows = [
        ("file", f"{trace.path.name} ({fmt_bytes(info.size_bytes)})"),
        (
            "nsys / schema",
            f"{info.nsys_version or 'unknown (no metadata)'} / {info.schema_version or '—'}",
        ),
        ("captured", started),
        ("span", span),
        (
            "GPU events",
            f"{info.count('kernel'):,} kernels · {info.count('memcpy'):,} memcpys · "
            f"{info.count('memset'):,} memsets",
        ),
        (
            "CPU events",
            f"{info.count('runtime'):,} CUDA API calls · {info.count('nvtx'):,} NVTX events",
        ),
        ("processes", shown),
        ("GPUs", "; ".join(gpu_kinds(trace)) or "—"),
    ]
    note = trace.graph_note()  # CUDA graphs traced at graph level: say what is not here
    if note:
        rows.append(("not in this report", note))
    return rows


def kernel_rows(census: pl.DataFrame, palette: svg.Palette, total: int) -> list[KernelRow]:
    rows = []
    label = labels(census["name"].to_list())
    for r in census.iter_rows(named=True):
        cat = category_of(r["name"])
        family, fields = decode(r["name"])
        rows.append(
            KernelRow(
                name=r["name"],
                short=label[r["name"]],
                category=cat,
                color=palette(cat),
                calls=r["instances"],
                total_ns=r["total_ns"],
                share=(r["total_ns"] / total) if total else 0.0,
                avg_ns=r["avg_ns"],
                med_ns=r["med_ns"],
                min_ns=r["min_ns"],
                max_ns=r["max_ns"],
                family=family,
                fields=fields,
                danger=danger_hits(r["name"]),
            )
        )
    return rows


def category_rows(
    trace: Trace, palette: svg.Palette, name_kind: str, *, subfamily: bool | None = None
) -> list[CategoryRow]:
    """The trace's ``tracelens lineup``: the one source of its numbers, memcpy and memset
    time included (in ``memory``). ``subfamily``: as :func:`~tracelens.lineup.category_summary`
    (None breaks down gemm and memory)."""
    df = trace.lineup(name=name_kind, subfamily=subfamily)
    return [
        CategoryRow(
            category=r["category"],
            subfamily=r["subfamily"],
            color=palette(r["category"]),
            calls=r["calls"],
            total_ns=r["total_ns"],
            time_pct=r["time_pct"],
            avg_ns=r["avg_ns"],
            top_kernel=short(r["top_kernel"], 70),
        )
        for r in df.iter_rows(named=True)
    ]


def _profiles_by_name(p: KernelProfiles) -> tuple[dict, dict, dict]:
    """(spread row, {bin: launches}, [config rows]) per kernel name."""
    spread = {r["name"]: r for r in p.spread.iter_rows(named=True)}
    hists: dict[str, dict[int, int]] = {}
    for name, b, n in p.histogram.select("name", "bin", "launches").iter_rows():
        hists.setdefault(name, {})[b] = n
    configs: dict[str, list[dict]] = {}
    for r in p.configs.iter_rows(named=True):
        configs.setdefault(r["name"], []).append(r)
    return spread, hists, configs


def stakeout_rows(
    traces: list[Trace],
    names: list[str],
    name_kind: str,
    palette: svg.Palette,
    ratios: dict[str, float | None] | None = None,
) -> list[StakeoutRow]:
    """Duration distribution and launch configurations of ``names`` in one or two traces
    (:func:`tracelens.stakeout.kernel_profiles` of each)."""
    from ..stakeout import kernel_profiles

    if not names:
        return []
    sides = [
        _profiles_by_name(kernel_profiles(t, names, name=name_kind, per_octave=PER_OCTAVE))
        for t in traces
    ]
    two = len(traces) > 1
    label = labels(names)
    rows = []
    for name in names:
        cat = category_of(name)
        color = palette(cat)
        sa = sides[0][0].get(name)
        sb = sides[1][0].get(name) if two else None
        if two:
            chart = svg.histogram(
                sides[0][1].get(name, {}),
                sides[1][1].get(name, {}),
                per_octave=PER_OCTAVE,
                color=color,
                medians=(sa and sa["p50_ns"], sb and sb["p50_ns"]),
            )
        else:
            chart = svg.histogram(
                sides[0][1].get(name, {}),
                per_octave=PER_OCTAVE,
                color=color,
                medians=(None, sa and sa["p50_ns"]),
            )
        cfg = []
        seen = 0
        for side_key, (_spread, _hists, configs) in zip("AB", sides, strict=False):
            mine = configs.get(name, [])
            seen += len(mine)
            cfg += [{**r, "side": side_key} for r in mine[:STAKEOUT_CONFIGS]]
        family, fields = decode(name)
        rows.append(
            StakeoutRow(
                name=name,
                short=label[name],
                category=cat,
                color=color,
                chart=chart,
                stats_a=sa,
                stats_b=sb,
                configs=cfg,
                configs_more=seen - len(cfg),
                per_call_ratio=(ratios or {}).get(name),
                fields=fields,
                family=family,
            )
        )
    return rows


def memory_rows(trace: Trace) -> list[dict[str, Any]]:
    try:
        t = trace.memory_time()
        s = trace.memory_size()
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


def danger_rows(census: pl.DataFrame, top: int | None = None) -> tuple[list[dict[str, Any]], int]:
    """Danger-zone kernels of one trace (every kernel of ``census`` is matched, not only
    those shown: :func:`tracelens.danger.danger_table`): its first ``top`` rows (all when
    None), and how many rows it has in all."""
    from ..danger import danger_table

    table = danger_table(census)
    shown = table if top is None else table.head(top)
    label = labels(shown["name"].unique(maintain_order=True).to_list())
    rows = [
        {
            "level": r["level"],
            "rule_id": r["rule_id"],
            "name": r["name"],
            "short": label[r["name"]],
            "calls": r["instances"],
            "total_ns": r["total_ns"],
            "why": r["why"],
            "fix": r["fix"],
        }
        for r in shown.iter_rows(named=True)
    ]
    return rows, table.height


def danger_left_out(shown: int, total: int, label: str, omitted: list[Omitted]) -> None:
    """Say how many danger-zone rows the page leaves out (``tracelens danger`` lists all)."""
    if total > shown:
        omitted.append(
            Omitted(
                f"{label}: danger zone",
                f"{total - shown:,} more danger-zone rows (riskiest and largest are listed) "
                "are not shown; raise --top, or run `tracelens danger` for every row",
            )
        )


def danger_rule_notes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each rule of danger-zone ``rows`` once (rule_id, level, why, fix), in row order: the
    page explains a rule once and its rows refer to it."""
    notes: dict[str, dict[str, Any]] = {}
    for r in rows:
        notes.setdefault(r["rule_id"], {k: r[k] for k in ("rule_id", "level", "why", "fix")})
    return list(notes.values())


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


def step_rows(steps: Steps | None) -> tuple[list[dict[str, Any]], dict[str, Any], str | None]:
    """The rows of the steps table (the first STEP_ROWS steps, and every outlier or warm-up
    step after them), the summary (:meth:`Steps.summary`), and what was left out."""
    if steps is None or not steps.count:
        return [], {}, None
    frame = steps.frame.sort("step", "device")
    keep = frame.filter((frame["step"] <= STEP_ROWS) | frame["outlier"] | frame["warmup"])
    left = frame["step"].n_unique() - keep["step"].n_unique()
    note = f"{left:,} more steps without anything unusual are not listed" if left else None
    return keep.to_dicts(), steps.summary(), note


def _timekeeping(
    trace: Trace, label: str, omitted: list[Omitted], read: DiffSide | None = None
) -> tuple[Util | None, Steps | None]:
    """trace.util() and trace.steps() (those the diff read, ``read``, when it did), unless
    the trace has more than threshold.util_max_launches GPU operations (then None, None,
    and the page says so)."""
    info = trace.info
    ops = info.count("kernel") + info.count("memcpy") + info.count("memset")
    limit = _timekeeping_max_operations()
    if ops > limit:
        omitted.append(
            Omitted(
                f"{label}: steps and utilization",
                f"left out above {limit:,} GPU operations ({ops:,} here; they sort every "
                "operation): run `tracelens steps` and `tracelens util`; "
                "the detail window is the busiest stretch instead of a step",
            )
        )
        return None, None
    if read is not None and read.util is not None and read.steps is not None:
        return read.util, read.steps
    return trace.util(), trace.steps()


def _kernels_left_out(census: pl.DataFrame, top: int, label: str, omitted: list[Omitted]):
    """Say how many kernels (and how much of the kernel time) the table leaves out."""
    if census.height <= top:
        return
    kernel_time = int(census["total_ns"].sum())
    rest = int(census.tail(census.height - top)["total_ns"].sum())
    omitted.append(
        Omitted(
            f"{label}: kernels",
            f"{census.height - top:,} more kernels ({fmt_ns(rest)}, "
            f"{pct(rest / kernel_time if kernel_time else 0)} "
            "of kernel time) are not listed; raise --top to see them",
        )
    )


def _has_kernels(trace: Trace) -> bool:
    try:
        trace.require_kernels()
    except MissingDataError:
        return False
    return trace.info.count("kernel") > 0


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
) -> Side:
    """Everything the page shows about one trace. ``read``: what :func:`tracelens.diff`
    read from it (its census, totals and util are not read again)."""
    from .layout import build_timeline

    notes: list[str] = []
    has_kernels = _has_kernels(trace)
    kernels: list[KernelRow] = []
    categories: list[CategoryRow] = []
    kernels_total = kernel_time = 0
    busy_ns = census = None
    if has_kernels:
        busy_ns = (read.totals if read else trace_totals(trace))["gpu_busy_ns"]
        census = read.census if read else trace.census(name=name_kind)
        kernels_total = census.height
        kernel_time = int(census["total_ns"].sum())
        categories = category_rows(trace, palette, name_kind)
        kernels = kernel_rows(census.head(top), palette, kernel_time)
        _kernels_left_out(census, top, label, omitted)
    else:
        notes.append(
            "no CUDA kernels in this export (captured without -t cuda, or a CPU-only run): "
            "nothing to chart"
        )
    danger: list[dict[str, Any]] = []
    if census is not None:
        danger, danger_total = danger_rows(census, top)
        danger_left_out(len(danger), danger_total, label, omitted)
    util, steps = None, None
    if has_kernels:
        util, steps = _timekeeping(trace, label, omitted, read)
    tree = _nvtx_tree(trace, label, omitted) if has_kernels else None
    steps_shown, steps_summary, steps_left = step_rows(steps)
    if steps_left:
        omitted.append(Omitted(f"{label}: steps", steps_left))
    stake = []
    if has_kernels and stakeout:
        stake = stakeout_rows(
            [trace], [k.name for k in kernels[:STAKEOUT_KERNELS]], name_kind, palette
        )
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
        kernel_chart=_kernel_chart(kernels),
        category_chart=_category_chart(categories),
        stakeout=stake,
        timeline=build_timeline(trace, key=key, palette=palette, name_kind=name_kind, steps=steps),
        danger=danger,
        danger_rules=danger_rule_notes(danger),
        memory=memory_rows(trace),
        header=header_rows(trace, busy_ns),
        gpus=gpu_kinds(trace),
        notes=notes,
        lineup_total_ns=sum(c.total_ns for c in categories if c.subfamily is None),
        util=util_rows(util),
        steps=steps,
        step_rows=steps_shown,
        step_summary=steps_summary,
        nvtx=tree,
    )


def _nvtx_tree(trace: Trace, label: str, omitted: list[Omitted]) -> NvtxTree | None:
    """The NVTX tree, unless the trace has more than threshold.nvtx_max_launches kernel
    launches (data/clues.toml: the GPU projection's cost)."""
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
    tree = nvtx_tree(trace)
    if tree is not None and tree.left_out:
        omitted.append(
            Omitted(
                f"{label}: NVTX tree",
                f"{tree.left_out:,} of {tree.ranges:,} range paths with less GPU time are not "
                f"drawn (the {TREE_NODES} with the most are): `tracelens nvtx --gpu --group "
                "path` lists them all",
            )
        )
    return tree


def _kernel_bar(k: KernelRow, label: str) -> svg.Bar:
    tip = (
        f"{k.short}\n{k.category} · {k.calls:,} calls · {fmt_ns(k.total_ns)} "
        f"({pct(k.share)}) · avg {fmt_ns(k.avg_ns)}"
    )
    right = f"{fmt_ns(k.total_ns)} · {pct(k.share)}"
    return svg.Bar(label, k.total_ns, k.color, right=right, tip=tip, mono=True)


def _category_bar(c: CategoryRow) -> svg.Bar:
    share = share_pct(c.time_pct)
    tip = f"{c.category}: {c.calls:,} calls, {fmt_ns(c.total_ns)} ({share} of GPU time)"
    return svg.Bar(
        c.category, c.total_ns, c.color, right=f"{fmt_ns(c.total_ns)} · {share}", tip=tip
    )


def _kernel_chart(kernels: list[KernelRow]) -> Markup:
    shown = kernels[:CHART_ROWS]
    label = labels([k.name for k in shown], svg.label_chars(300, mono=True))
    bars = [_kernel_bar(k, label[k.name]) for k in shown]
    return svg.hbars(bars, width=600, label_width=300, right_width=130)


def _category_chart(categories: list[CategoryRow]) -> Markup:
    bars = [_category_bar(c) for c in categories if c.subfamily is None][:CHART_ROWS]
    return svg.hbars(bars, width=520, label_width=130, right_width=130)
