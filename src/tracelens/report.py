"""``tracelens report``: one self-contained HTML page (an evidence board, tables, charts and a
timeline) or a compact Markdown summary, for one trace or for two.

    with tracelens.open("bs1.sqlite") as a, tracelens.open("bs16.sqlite") as b:
        html = tracelens.report.build_report(a, b)        # str, one offline HTML file
        md = tracelens.report.build_markdown(a, b)        # str, for CI summaries / PRs

The page is rendered by Jinja2 templates (``reports/templates/``) with autoescaping on:
kernel names and NVTX text come from the profiled program and always render as text. CSS,
JavaScript and the SVG charts are inline and the page carries a Content-Security-Policy
that forbids every network request. Big traces stay small: the timeline is aggregated in
SQL into bins per lane, individual events are drawn only for a bounded window, tables are
capped, and the page lists what it left out. Nothing here prints.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from . import svg
from .compare import COPY_KIND_LABELS, fmt_bytes, fmt_ns, fmt_ratio
from .errors import MissingDataError, UsageError

if TYPE_CHECKING:
    import polars as pl

    from .compare import TraceDiff
    from .trace import Trace

DEFAULT_TOP = 20  # rows of the kernel tables
CHART_ROWS = 12  # bars in a chart
STAKEOUT_KERNELS = 8  # kernels with a duration histogram
PER_OCTAVE = 4  # histogram bins per doubling of duration
OVERVIEW_BINS = 500  # time bins of the whole-trace overview, per lane
DETAIL_BINS = 1000  # time bins of the detail window when it has too many events to draw
DETAIL_MAX_EVENTS = 4000  # events drawn one by one in the detail window, per trace
DETAIL_TARGET_EVENTS = 600  # the default window is the busiest one with about this many
MAX_LANES = 24  # GPU lanes (device, stream) drawn per trace
NVTX_MAX = 1500  # NVTX ranges drawn per trace
NVTX_MAX_DEPTH = 4
WIDTH = 1180  # px, charts span the page

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)


# -- plug-ins that land separately -----------------------------------------------------------
def _category_of(name: str) -> tuple[str, str | None]:
    from .categories import classify

    c = classify(name)
    return c.category, c.subfamily


def _short(name: str | None, width: int = 80) -> str:
    if not name:
        return "?"
    from .kernelnames import normalize

    text = normalize(name)
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True)
class DecodedField:
    name: str
    value: str
    meaning: str = ""
    confidence: str = ""


def _decode(name: str) -> tuple[str | None, list[DecodedField]]:
    """(family, fields) of a kernel name as tracelens.kernelnames decodes it; the family is
    None when it says nothing the category does not."""
    from .kernelnames import decode

    try:
        kn = decode(name)
    except Exception:  # a decoder bug on one odd name must not take the whole page down
        return None, []
    family = kn.family if kn.family not in ("other", kn.category) else None
    fields = [
        DecodedField(f.name, str(f.value), f.meaning or "", f.confidence or "")
        for f in kn.fields
        if f.value not in (None, "")
    ]
    return family, fields


def _danger_hits(name: str) -> list[Any]:
    from .danger import match_danger

    return list(match_danger(name))


# -- small formatting helpers ------------------------------------------------------------------
def _pct(x: float | None, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x * 100:.{digits}f}%"


def _count(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def _signed_ns(ns: float | None) -> str:
    if ns is None:
        return "—"
    return ("+" if ns >= 0 else "−") + fmt_ns(abs(ns))


def _ratio_class(r: float | None) -> str:
    if r is None:
        return ""
    if math.isinf(r) or r >= 1.5:
        return "up"
    if r <= 1 / 1.5:
        return "down"
    return ""


@dataclass
class Omitted:
    """Something the page leaves out, said in the page."""

    where: str
    what: str


# -- per-trace data ------------------------------------------------------------------------------
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
class TimelineView:
    overview: Markup
    detail: Markup
    caption: str
    window: tuple[int, int] | None
    window_reason: str
    legend: list[tuple[str, str]]
    notes: list[str]


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
    memory: list[dict[str, Any]]
    header: list[tuple[str, str]]
    gpus: list[str]
    notes: list[str]
    lineup_total_ns: int = 0  # what the lineup's shares are of: kernels + memcpy + memset


def _header_rows(trace: Trace, totals: dict[str, Any]) -> tuple[list[tuple[str, str]], list[str]]:
    """(label, value) rows describing the export, and one line per kind of GPU."""
    info = trace.info
    kinds: dict[str, list[Any]] = {}
    for g in info.gpus:
        bits = []
        if g.sm_count:
            bits.append(f"{g.sm_count} SMs")
        if g.memory_bytes:
            bits.append(f"{g.memory_bytes / 2**30:.0f} GiB")
        if g.compute_capability:
            bits.append(f"sm {g.compute_capability}")
        text = (g.name or "unknown GPU") + (f" ({', '.join(bits)})" if bits else "")
        kinds.setdefault(text, []).append(g.id)
    gpus = [
        (f"{len(ids)} × " if len(ids) > 1 else f"GPU {ids[0]}: ") + text
        for text, ids in kinds.items()
    ]
    started = "—"
    if info.session_start_utc_ns:
        t = _dt.datetime.fromtimestamp(info.session_start_utc_ns / 1e9, tz=_dt.UTC)
        started = t.strftime("%Y-%m-%d %H:%M:%S UTC")
    span = fmt_ns(info.duration_ns)
    if totals.get("gpu_busy_ns"):
        span += f" (GPU busy {fmt_ns(totals['gpu_busy_ns'])})"
    procs = [f"{p.pid} {p.name or ''}".strip() for p in info.processes]
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
        ("processes", "; ".join(svg.clip_text(p, 90) for p in procs[:4]) or "—"),
        ("GPUs", "; ".join(gpus) or "—"),
    ]
    if len(procs) > 4:
        rows[-2] = ("processes", rows[-2][1] + f"; +{len(procs) - 4} more")
    note = trace.graph_note()  # CUDA graphs traced at graph level: say what is not here
    if note:
        rows.append(("not in this report", note))
    return rows, gpus


def _kernel_rows(census: pl.DataFrame, palette: svg.Palette, total: int) -> list[KernelRow]:
    rows = []
    for r in census.iter_rows(named=True):
        cat, _sub = _category_of(r["name"])
        family, fields = _decode(r["name"])
        rows.append(
            KernelRow(
                name=r["name"],
                short=_short(r["name"]),
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
                danger=_danger_hits(r["name"]),
            )
        )
    return rows


def _category_rows(
    trace: Trace, palette: svg.Palette, name_kind: str, *, subfamily: bool | None = None
) -> list[CategoryRow]:
    """The trace's ``tracelens lineup``: the one source of its numbers, memcpy and memset
    time included (in ``memory``). ``subfamily``: as :func:`~tracelens.lineup.category_summary`
    (None breaks down gemm and memory)."""
    from .lineup import category_summary

    df = category_summary(trace, name=name_kind, subfamily=subfamily)
    return [
        CategoryRow(
            category=r["category"],
            subfamily=r["subfamily"],
            color=palette(r["category"]),
            calls=r["calls"],
            total_ns=r["total_ns"],
            time_pct=r["time_pct"],
            avg_ns=r["avg_ns"],
            top_kernel=_short(r["top_kernel"], 70),
        )
        for r in df.iter_rows(named=True)
    ]


def _share_pct(time_pct: float) -> str:
    return f"{time_pct:.1f}%"


def _stats_by_name(trace: Trace, names: list[str], name_kind: str) -> dict[str, dict[str, Any]]:
    if not names:
        return {}
    df = trace.query("report_kernel_stats", names=names, name_kind=name_kind)
    return {r["name"]: r for r in df.iter_rows(named=True)}


def _hists_by_name(trace: Trace, names: list[str], name_kind: str) -> dict[str, dict[int, int]]:
    out: dict[str, dict[int, int]] = defaultdict(dict)
    if not names:
        return out
    df = trace.query(
        "report_kernel_durations", names=names, name_kind=name_kind, per_octave=PER_OCTAVE
    )
    for name, b, n in df.select("name", "bin", "launches").iter_rows():
        out[name][b] = n
    return out


def _configs_by_name(trace: Trace, names: list[str], name_kind: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    if not names:
        return out
    df = trace.query("report_launch_configs", names=names, name_kind=name_kind)
    for r in df.iter_rows(named=True):
        out[r["name"]].append(r)
    return out


def _stakeout(
    traces: list[Trace],
    names: list[str],
    name_kind: str,
    palette: svg.Palette,
    ratios: dict[str, float | None] | None = None,
) -> list[StakeoutRow]:
    """Duration distribution and launch configurations of ``names`` in one or two traces."""
    stats = [_stats_by_name(t, names, name_kind) for t in traces]
    hists = [_hists_by_name(t, names, name_kind) for t in traces]
    configs = [_configs_by_name(t, names, name_kind) for t in traces]
    rows = []
    for name in names:
        cat, _ = _category_of(name)
        color = palette(cat)
        sa = stats[0].get(name)
        sb = stats[1].get(name) if len(traces) > 1 else None
        if len(traces) > 1:
            chart = svg.histogram(
                hists[0].get(name, {}),
                hists[1].get(name, {}),
                per_octave=PER_OCTAVE,
                color=color,
                medians=(sa and sa["p50_ns"], sb and sb["p50_ns"]),
            )
        else:
            chart = svg.histogram(
                hists[0].get(name, {}),
                per_octave=PER_OCTAVE,
                color=color,
                medians=(None, sa and sa["p50_ns"]),
            )
        cfg = []
        seen = 0
        for side, cmap in zip("AB", configs, strict=False):
            for r in cmap.get(name, []):
                seen += 1
                if len([c for c in cfg if c["side"] == side]) < 3:
                    cfg.append({**r, "side": side})
        family, fields = _decode(name)
        rows.append(
            StakeoutRow(
                name=name,
                short=_short(name),
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


def _memory_rows(trace: Trace) -> list[dict[str, Any]]:
    try:
        t = trace.memory_time()
        s = trace.memory_size()
    except MissingDataError:
        return []
    sizes = {r["operation"]: r for r in s.iter_rows(named=True)}
    rows = []
    for r in t.iter_rows(named=True):
        size = sizes.get(r["operation"], {})
        rows.append(
            {
                "operation": r["operation"],
                "count": r["count"],
                "total_ns": r["total_ns"],
                "avg_ns": r["avg_ns"],
                "time_pct": r["time_pct"],
                "bytes": size.get("total_bytes"),
            }
        )
    return rows


def _single_danger(rows: list[KernelRow], census: pl.DataFrame) -> list[dict[str, Any]]:
    """Danger-zone kernels of one trace (every kernel, not only the rows shown)."""
    from .danger import danger_table

    df = danger_table(census)
    out = []
    for r in df.iter_rows(named=True):
        name = r.get("name") or r.get("kernel") or ""
        out.append(
            {
                "level": r.get("level") or r.get("risk") or "",
                "rule_id": r.get("rule_id") or r.get("rule") or "",
                "name": name,
                "short": _short(name),
                "calls": r.get("instances") or r.get("calls"),
                "total_ns": r.get("total_ns"),
                "why": r.get("why") or r.get("reason") or "",
                "fix": r.get("fix") or "",
            }
        )
    return out


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
) -> Side:
    """Everything the page shows about one trace."""
    info = trace.info
    notes: list[str] = []
    try:
        trace.require_kernels()
        has_kernels = info.count("kernel") > 0
    except MissingDataError:
        has_kernels = False
    totals: dict[str, Any] = {}
    kernels: list[KernelRow] = []
    categories: list[CategoryRow] = []
    kernels_total = 0
    kernel_time = 0
    census = None
    if has_kernels:
        totals = trace.query("trace_totals", start_ns=None, end_ns=None).to_dicts()[0]
        census = trace.census(name=name_kind)
        kernels_total = census.height
        kernel_time = int(census["total_ns"].sum())
        categories = _category_rows(trace, palette, name_kind)
        kernels = _kernel_rows(census.head(top), palette, kernel_time)
        if kernels_total > top:
            rest = census.tail(kernels_total - top)
            omitted.append(
                Omitted(
                    f"{label}: kernels",
                    f"{kernels_total - top:,} more kernels ({fmt_ns(int(rest['total_ns'].sum()))}, "
                    f"{_pct(int(rest['total_ns'].sum()) / kernel_time if kernel_time else 0)} "
                    "of kernel time) are not listed; raise --top to see them",
                )
            )
    else:
        notes.append(
            "no CUDA kernels in this export (captured without -t cuda, or a CPU-only run): "
            "nothing to chart"
        )
    header, gpus = _header_rows(trace, totals)
    kernel_chart = svg.hbars(
        [
            svg.Bar(
                label=k.short,
                value=k.total_ns,
                color=k.color,
                right=f"{fmt_ns(k.total_ns)} · {_pct(k.share)}",
                tip=f"{k.short}\n{k.category} · {k.calls:,} calls · {fmt_ns(k.total_ns)} "
                f"({_pct(k.share)}) · avg {fmt_ns(k.avg_ns)}",
                mono=True,
            )
            for k in kernels[:CHART_ROWS]
        ],
        width=600,
        label_width=300,
        right_width=130,
    )
    category_chart = svg.hbars(
        [
            svg.Bar(
                label=c.category,
                value=c.total_ns,
                color=c.color,
                right=f"{fmt_ns(c.total_ns)} · {_share_pct(c.time_pct)}",
                tip=f"{c.category}: {c.calls:,} calls, {fmt_ns(c.total_ns)} "
                f"({_share_pct(c.time_pct)} of GPU time)",
            )
            for c in [c for c in categories if c.subfamily is None][:CHART_ROWS]
        ],
        width=520,
        label_width=130,
        right_width=130,
    )
    stake = []
    if has_kernels and stakeout:
        names = [k.name for k in kernels[:STAKEOUT_KERNELS]]
        stake = _stakeout([trace], names, name_kind, palette)
    timeline = build_timeline(trace, key=key, palette=palette, name_kind=name_kind)
    danger = _single_danger(kernels, census) if census is not None else []
    memory = _memory_rows(trace)
    return Side(
        key=key,
        label=label,
        info=info,
        has_kernels=has_kernels,
        totals=totals,
        kernels=kernels,
        kernels_total=kernels_total,
        kernel_time_ns=kernel_time,
        categories=categories,
        kernel_chart=kernel_chart,
        category_chart=category_chart,
        stakeout=stake,
        timeline=timeline,
        danger=danger,
        memory=memory,
        header=header,
        gpus=gpus,
        notes=notes,
        lineup_total_ns=sum(c.total_ns for c in categories if c.subfamily is None),
    )


# -- timeline --------------------------------------------------------------------------------------
def _gpu_span(trace: Trace) -> tuple[int, int] | None:
    firsts, lasts = [], []
    for e in trace.info.events:
        if e.kind in ("kernel", "memcpy", "memset") and e.first_ns is not None:
            firsts.append(e.first_ns)
            lasts.append(e.last_ns)
    if not firsts:
        return None
    t0, t1 = min(firsts), max(lasts)
    return (t0, t1) if t1 > t0 else (t0, t0 + 1000)


@dataclass
class _Lanes:
    keys: list[tuple[int, int]]
    labels: list[svg.Lane]
    dropped: int


def _category_params(trace: Trace, name_kind: str) -> tuple[list[int], list[str]]:
    if not trace.has_table("CUPTI_ACTIVITY_KIND_KERNEL"):
        return [-1], ["other"]
    df = trace.query("report_kernel_names", name_kind=name_kind)
    ids = df["name_id"].to_list()
    cats = [_category_of(n)[0] for n in df["name"].to_list()]
    return (ids or [-1]), (cats or ["other"])


def _bins(trace: Trace, t0: int, t1: int, bins: int, cats: tuple[list[int], list[str]], nk: str):
    return trace.query(
        "report_timeline_bins",
        t0=t0,
        t1=t1,
        bins=bins,
        name_ids=cats[0],
        categories=cats[1],
        name_kind=nk,
    )


def _binned_spans(
    df: pl.DataFrame,
    lane_index: dict[tuple[int, int], int],
    t0: int,
    t1: int,
    bins: int,
    palette: svg.Palette,
) -> list[svg.Span]:
    """One rectangle per run of bins with the same dominant category and shade."""
    bw = (t1 - t0) / bins
    cells: dict[tuple[int, int], dict[str, list[float]]] = defaultdict(dict)
    for device, stream, b, cat, busy, n in df.iter_rows():
        lane = lane_index.get((device, stream))
        if lane is not None:
            cells[(lane, b)][cat] = [busy, n]
    runs: list[dict[str, Any]] = []
    last: dict[int, dict[str, Any]] = {}
    for lane, b in sorted(cells):
        cats = cells[(lane, b)]
        busy = sum(v[0] for v in cats.values())
        dom = max(cats.items(), key=lambda kv: (kv[1][0], kv[0]))[0]
        util = min(busy / bw, 1.0) if bw else 1.0
        shade = 0.3 if util < 0.1 else 0.55 if util < 0.4 else 0.8 if util < 0.8 else 1.0
        run = last.get(lane)
        if not (run and run["dom"] == dom and run["b1"] == b - 1 and run["shade"] == shade):
            run = {"lane": lane, "b0": b, "dom": dom, "shade": shade, "mix": defaultdict(float)}
            run["n"] = 0
            runs.append(run)
            last[lane] = run
        run["b1"] = b
        run["n"] += int(sum(v[1] for v in cats.values()))
        for c, v in cats.items():
            run["mix"][c] += v[0]
    spans = []
    for run in runs:
        start, end = t0 + run["b0"] * bw, t0 + (run["b1"] + 1) * bw
        busy = sum(run["mix"].values())
        mix = sorted(run["mix"].items(), key=lambda kv: -kv[1])[:3]
        tip = (
            f"{_pct(min(busy / (end - start), 1.0), 0)} busy · {run['n']:,} operations started\n"
            + " · ".join(f"{c} {_pct(v / busy if busy else 0, 0)}" for c, v in mix)
            + f"\n{fmt_ns(start)} → {fmt_ns(end)}"
        )
        spans.append(
            svg.Span(run["lane"], start, end, palette(run["dom"]), opacity=run["shade"], tip=tip)
        )
    return spans


def _nvtx_columns(trace: Trace) -> dict[str, bool]:
    cols = set(trace.tables.get("NVTX_EVENTS", ()))
    return {c: c in cols for c in ("start", "end", "eventType", "text", "textId", "globalTid")}


def _has_nvtx(trace: Trace) -> bool:
    cols = _nvtx_columns(trace)
    return trace.has_table("NVTX_EVENTS") and cols["start"] and cols["end"] and cols["eventType"]


def _nvtx_sql(cols: dict[str, bool], where: str, extra: str = "") -> str:
    """SQLite text selecting NVTX ranges (start, end, label, tid). Labels are read through
    Python's sqlite3, not DuckDB: a profiled program may write bytes that are not UTF-8."""
    text = "n.text" if cols["text"] else "NULL"
    if cols["textId"]:
        label = f"coalesce({text}, (SELECT value FROM StringIds WHERE id = n.textId))"
    else:
        label = text
    tid = "n.globalTid" if cols["globalTid"] else "NULL"
    return (
        f'SELECT n.start, n."end", {label} AS label, {tid} AS tid FROM NVTX_EVENTS AS n '
        f'WHERE n.eventType IN (59, 60, 70, 71) AND n."end" IS NOT NULL AND {where} {extra}'
    )


def _nvtx_ranges(
    trace: Trace, t0: int, t1: int, *, min_ns: int = 0, limit: int = NVTX_MAX
) -> tuple[list[tuple[int, int, str, int | None]], bool]:
    """NVTX ranges overlapping [t0, t1] at least ``min_ns`` long, earliest first."""
    if not _has_nvtx(trace):
        return [], False
    from ._sqlite import decode_text

    sql = _nvtx_sql(
        _nvtx_columns(trace),
        'n."end" >= ? AND n.start <= ? AND n."end" - n.start >= ?',
        f"ORDER BY n.start LIMIT {int(limit) + 1}",
    )
    rows = trace._sqlite_rows(sql, (t0, t1, min_ns))
    out = [(int(s), int(e), decode_text(label) or "", tid) for s, e, label, tid in rows[:limit]]
    return out, len(rows) > limit


_DIGITS = re.compile(r"\d+")


def _nvtx_step(trace: Trace) -> tuple[int, int, str, int | None] | None:
    """The first instance of the step-like NVTX range: of the ranges that repeat (labels
    compared with their numbers blanked: ``decode_step_1``, ``decode_step_2``, ...), the
    longest on average, but not longer than half the trace."""
    if not _has_nvtx(trace):
        return None
    from ._sqlite import decode_text

    cols = _nvtx_columns(trace)
    inner = _nvtx_sql(cols, "1")
    rows = trace._sqlite_rows(
        'SELECT label, count(*), sum("end" - start), min(start) '
        f"FROM ({inner}) GROUP BY label LIMIT 20000"
    )
    groups: dict[str, list[float]] = {}
    members: dict[str, list[bytes | str | None]] = defaultdict(list)
    for label, n, total, first in rows:
        key = _DIGITS.sub("#", decode_text(label) or "")
        g = groups.setdefault(key, [0, 0, first])
        g[0] += n
        g[1] += total or 0
        g[2] = min(g[2], first)
        members[key].append(label)
    limit = (trace.info.duration_ns or 0) * 0.5
    best = None
    for key, (n, total, first) in groups.items():
        avg = total / n if n else 0
        if n < 2 or avg <= 0 or (limit and avg > limit):
            continue
        score = (avg, -first)
        if best is None or score > best[0]:
            best = (score, key)
    if best is None:
        return None
    labels = [m for m in members[best[1]] if m is not None][:500]
    if not labels:
        return None
    marks = ", ".join(["CAST(? AS TEXT)"] * len(labels))  # labels come back as bytes
    first_row = trace._sqlite_rows(
        f'SELECT start, "end", label, tid FROM ({inner}) WHERE label IN ({marks}) '
        "ORDER BY start LIMIT 1",
        tuple(labels),
    )
    if not first_row:
        return None
    s, e, label, tid = first_row[0]
    return int(s), int(e), decode_text(label) or "", tid


def _nvtx_layout(
    ranges: list[tuple[int, int, str, int | None]],
    *,
    max_depth: int,
    max_threads: int,
    notes: list[str],
    compact: bool = False,
) -> tuple[list[svg.Lane], list[svg.Span]]:
    """NVTX lanes (one per thread, nested ranges stacked) and their spans."""
    by_tid: dict[int | None, list[tuple[int, int, str]]] = defaultdict(list)
    for s, e, label, tid in ranges:
        by_tid[tid].append((s, e, label))
    lanes: list[svg.Lane] = []
    spans: list[svg.Span] = []
    deep = 0
    threads = sorted(by_tid.items(), key=lambda kv: (-len(kv[1]), kv[0] or 0))[:max_threads]
    for tid, items in sorted(threads, key=lambda kv: kv[0] or 0):
        items.sort(key=lambda r: (r[0], -r[1]))
        stack: list[int] = []
        placed = []
        for s, e, label in items:
            while stack and stack[-1] <= s:
                stack.pop()
            depth = len(stack)
            stack.append(e)
            if depth >= max_depth:
                deep += 1
                continue
            placed.append((s, e, label, depth))
        rows = max((p[3] for p in placed), default=0) + 1
        lane_no = len(lanes)
        lanes.append(
            svg.Lane("NVTX", f"tid {(tid or 0) & 0xFFFFFF}", kind="nvtx", height=rows * 14 - 1)
        )
        sibling: dict[int, int] = defaultdict(int)
        for s, e, label, depth in placed:
            sibling[depth] += 1
            spans.append(
                svg.Span(
                    lane_no,
                    s,
                    e,
                    NVTX_COLORS[depth % 2][sibling[depth] % 2],
                    tip=f"NVTX: {label}\n{fmt_ns(e - s)} · {fmt_ns(s)} → {fmt_ns(e)}",
                    label=label,
                    row=depth,
                )
            )
    if len(by_tid) > max_threads:
        notes.append(f"NVTX ranges of {len(by_tid) - max_threads} more threads are not drawn")
    if deep and not compact:
        notes.append(f"{deep:,} NVTX ranges nested deeper than {max_depth} are not drawn")
    return lanes, spans


NVTX_COLORS = (("#f1d27a", "#ead08a"), ("#f5b27a", "#f0c39a"))  # (depth parity, sibling parity)


def _busiest_window(per_bin_busy: list[float], per_bin_events: list[int]) -> tuple[int, int]:
    """(first bin, bins) of the busiest window holding about DETAIL_TARGET_EVENTS events."""
    nb = len(per_bin_busy)
    k = max(1, nb // 25)
    while True:
        best, best_i, max_events = -1.0, 0, 0
        busy = sum(per_bin_busy[:k])
        events = sum(per_bin_events[:k])
        for i in range(0, nb - k + 1):
            if i:
                busy += per_bin_busy[i + k - 1] - per_bin_busy[i - 1]
                events += per_bin_events[i + k - 1] - per_bin_events[i - 1]
            if busy > best + 1e-9:
                best, best_i, max_events = busy, i, events
        if k == 1 or max_events <= DETAIL_TARGET_EVENTS:
            return best_i, k
        k = max(1, k // 2)


def _choose_window(trace: Trace, g0: int, g1: int, ov: pl.DataFrame) -> tuple[tuple[int, int], str]:
    """The detail window: the first step (a repeated NVTX range, with the GPU work it
    launched), else the busiest stretch of the GPU span."""
    step = _nvtx_step(trace)
    if step is not None:
        s, e, label, tid = step
        proj = trace.query("report_nvtx_projection", t0=s, t1=e, tid=tid).to_dicts()[0]
        if proj["events"]:
            s, e = min(s, proj["gpu_start"]), max(e, proj["gpu_end"])
            pad = max((e - s) // 80, 1)
            why = (
                f"the first “{svg.clip_text(label, 60)}” NVTX range (a repeated range: one step) "
                f"and the {proj['events']:,} GPU operations it launched"
            )
            return (s - pad, e + pad), why
    per_busy = [0.0] * OVERVIEW_BINS
    per_events = [0] * OVERVIEW_BINS
    for b, busy, n in ov.select("bin", "busy_ns", "events").iter_rows():
        per_busy[b] += busy
        per_events[b] += n
    first, k = _busiest_window(per_busy, per_events)
    bw = (g1 + 1 - g0) / OVERVIEW_BINS
    w0, w1 = g0 + first * bw, g0 + (first + k) * bw
    share = k / OVERVIEW_BINS
    why = f"the busiest {_pct(share, 0 if share >= 0.01 else 1)} of the GPU span"
    events = sum(per_events[first : first + k])
    if events > DETAIL_TARGET_EVENTS:
        # Even one bin is crowded (a very long trace): take the start of it, short enough
        # to hold about DETAIL_TARGET_EVENTS operations, so they can be drawn one by one.
        w1 = w0 + (w1 - w0) * DETAIL_TARGET_EVENTS / events
        why = f"the start of the busiest {_pct(share, 1)} of the GPU span"
    return (int(w0), int(math.ceil(w1))), why


def _event_spans(
    trace: Trace,
    events: pl.DataFrame,
    lane_index: dict[tuple[int, int], int],
    palette: svg.Palette,
) -> list[svg.Span]:
    names: dict[int, str] = {}
    ids = [i for i in events["name_id"].unique().to_list() if i is not None]
    if ids:
        names = dict(
            trace.sql(
                "SELECT id, value FROM strings WHERE id IN (SELECT unnest($ids))", ids=ids
            ).iter_rows()
        )
    cats: dict[str, str] = {}
    spans = []
    for r in events.iter_rows(named=True):
        lane = lane_index.get((r["device"], r["stream"]))
        if lane is None:
            continue
        dur = r["end"] - r["start"]
        if r["kind"] == "kernel":
            name = names.get(r["name_id"], "?")
            if name not in cats:
                cats[name] = _category_of(name)[0]
            cat = cats[name]
            tip = (
                f"{_short(name, 160)}\n{cat} · {fmt_ns(dur)} · grid {r['grid']} · "
                f"block {r['block']}\nstart {fmt_ns(r['start'])}"
            )
            color = palette(cat)
        else:
            if r["kind"] == "memcpy":
                what = COPY_KIND_LABELS.get(r["detail"], "copies").removesuffix(" copies")
            else:
                what = ""
            tip = (
                f"{r['kind']} {what} · {fmt_bytes(r['bytes'])} · {fmt_ns(dur)}\n"
                f"start {fmt_ns(r['start'])}"
            ).replace("  ", " ")
            color = palette(r["kind"])
        spans.append(svg.Span(lane, r["start"], r["end"], color, tip=tip))
    return spans


def build_timeline(
    trace: Trace,
    *,
    key: str,
    palette: svg.Palette,
    name_kind: str = "demangled",
    window: tuple[int, int] | None = None,
) -> TimelineView | None:
    """The overview (whole GPU span, binned in SQL) and a detail window (events one by one
    when there are few enough, else finer bins), with NVTX ranges."""
    span = _gpu_span(trace)
    if span is None:
        return None
    g0, g1 = span
    notes: list[str] = []
    cats = _category_params(trace, name_kind)
    ov = _bins(trace, g0, g1 + 1, OVERVIEW_BINS, cats, name_kind)
    # Lanes: (device, stream), the busiest MAX_LANES of them, in device/stream order.
    busy_by_lane: dict[tuple[int, int], float] = defaultdict(float)
    for device, stream, busy in ov.select("device", "stream", "busy_ns").iter_rows():
        busy_by_lane[(device, stream)] += busy
    keys = sorted(busy_by_lane, key=lambda k: -busy_by_lane[k])[:MAX_LANES]
    dropped = len(busy_by_lane) - len(keys)
    keys.sort(key=lambda k: (k[0] is None, k[0] or 0, k[1] is None, k[1] or 0))
    if dropped:
        notes.append(
            f"{dropped} quieter lanes (device, stream) are not drawn; the {len(keys)} busiest are"
        )
    span_ns = (g1 + 1 - g0) or 1

    def gpu_lanes(compact: bool) -> list[svg.Lane]:
        return [
            svg.Lane(
                f"GPU {d} · stream {s}",
                _pct(busy_by_lane[(d, s)] / span_ns, 0) + " busy" if not compact else "",
                height=12 if compact else 22,
            )
            for d, s in keys
        ]

    # Overview: top-level NVTX ranges long enough to see, then the binned GPU lanes.
    ov_nvtx, _ = _nvtx_ranges(trace, g0, g1, min_ns=span_ns // OVERVIEW_BINS, limit=NVTX_MAX)
    ov_nvtx_lanes, ov_nvtx_spans = _nvtx_layout(
        ov_nvtx, max_depth=1, max_threads=2, notes=[], compact=True
    )
    off = len(ov_nvtx_lanes)
    ov_spans = ov_nvtx_spans + _binned_spans(
        ov, {k: i + off for i, k in enumerate(keys)}, g0, g1 + 1, OVERVIEW_BINS, palette
    )

    if window is None:
        window, reason = _choose_window(trace, g0, g1, ov)
    else:
        reason = "the requested window"
    w0, w1 = window
    w1 = max(w1, w0 + 1)
    nvtx, nvtx_more = _nvtx_ranges(trace, w0, w1)
    nvtx_lanes, nvtx_spans = _nvtx_layout(
        nvtx, max_depth=NVTX_MAX_DEPTH, max_threads=4, notes=notes
    )
    if nvtx_more:
        notes.append(f"only the first {NVTX_MAX:,} NVTX ranges of the detail window are drawn")
    off_d = len(nvtx_lanes)
    lane_index = {k: i + off_d for i, k in enumerate(keys)}
    events = trace.query(
        "report_timeline_events", t0=w0, t1=w1, limit=DETAIL_MAX_EVENTS + 1, name_kind=name_kind
    )
    if events.height <= DETAIL_MAX_EVENTS:
        detail_spans = nvtx_spans + _event_spans(trace, events, lane_index, palette)
        how = f"{events.height:,} GPU operations drawn one by one"
    else:
        db = _bins(trace, w0, w1, DETAIL_BINS, cats, name_kind)
        detail_spans = nvtx_spans + _binned_spans(db, lane_index, w0, w1, DETAIL_BINS, palette)
        how = (
            f"more than {DETAIL_MAX_EVENTS:,} GPU operations, so aggregated into "
            f"{DETAIL_BINS:,} bins per lane"
        )
        notes.append(
            f"the detail window holds more than {DETAIL_MAX_EVENTS:,} GPU operations: drawn as "
            f"{DETAIL_BINS:,} time bins per lane (color: the category with most time; shade: "
            "how busy), not one by one"
        )
    info = trace.info
    total_ops = info.count("kernel") + info.count("memcpy") + info.count("memset")
    drawn = events.height if events.height <= DETAIL_MAX_EVENTS else 0
    if total_ops > drawn:
        notes.append(
            f"{total_ops - drawn:,} of the {total_ops:,} GPU operations are not drawn one by one: "
            f"the overview aggregates the whole trace into {OVERVIEW_BINS} time bins per lane"
        )
    overview = svg.timeline(
        svg.Timeline(g0, g1 + 1, ov_nvtx_lanes + gpu_lanes(True), ov_spans, highlight=(w0, w1)),
        width=WIDTH,
        uid=f"{key}-ov",
    )
    detail = svg.timeline(
        svg.Timeline(w0, w1, nvtx_lanes + gpu_lanes(False), detail_spans, relative=True),
        width=WIDTH,
        zoomable=True,
        uid=f"{key}-dt",
    )
    caption = (
        f"Detail window {fmt_ns(w0)} → {fmt_ns(w1)} ({fmt_ns(w1 - w0)}): {reason}; {how}. "
        f"Overview: the whole GPU span, {fmt_ns(g0)} → {fmt_ns(g1)}, in {OVERVIEW_BINS} bins "
        "per lane."
    )
    legend = [(c, palette(c)) for c in ov["category"].unique().sort().to_list()]
    return TimelineView(overview, detail, caption, (w0, w1), reason, legend, notes)


# -- the page -----------------------------------------------------------------------------------
@cache
def _environment():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    from ._resources import templates_dir

    env = Environment(
        loader=FileSystemLoader(str(templates_dir())),
        autoescape=True,  # every {{ }} is escaped: names come from the profiled program
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        ns=fmt_ns,
        bytes=fmt_bytes,
        ratio=fmt_ratio,
        pct=_pct,
        count=_count,
        signed_ns=_signed_ns,
        ratio_class=_ratio_class,
        short=_short,
    )
    env.globals["asset"] = _asset
    return env


def _asset(name: str) -> Markup:
    """A static file of the templates folder (CSS, JS), inlined verbatim: it is ours."""
    from ._resources import templates_dir

    return Markup((templates_dir() / name).read_text(encoding="utf-8"))


def _label(trace: Trace) -> str:
    return trace.path.name


def _check_top(top: int) -> int:
    if top < 1:
        raise UsageError(f"--top must be at least 1 (got {top})")
    return top


def build_report(
    trace_a: Trace,
    trace_b: Trace | None = None,
    *,
    top: int = DEFAULT_TOP,
    name: str = "demangled",
    title: str | None = None,
) -> str:
    """The HTML page: one trace (census, lineup, stakeout, timeline, danger, memory) or two
    (the diff's evidence board and tables on top, each trace's detail below)."""
    from . import __version__

    _check_top(top)
    palette = svg.Palette()
    omitted: list[Omitted] = []
    context: dict[str, Any] = {
        "version": __version__,
        "csp": CSP,
        "top": top,
        "per_octave": PER_OCTAVE,
    }
    if trace_b is None:
        side = collect_side(
            trace_a,
            key="t",
            label=_label(trace_a),
            top=top,
            name_kind=name,
            palette=palette,
            omitted=omitted,
        )
        context.update(
            mode="single",
            title=title or f"tracelens report: {side.label}",
            sides=[side],
            diff=None,
        )
    else:
        from .compare import diff as compute

        d = compute(trace_a, trace_b, name=name)
        sa = collect_side(
            trace_a,
            key="a",
            label=d.label_a,
            top=top,
            name_kind=name,
            palette=palette,
            omitted=omitted,
            stakeout=False,
        )
        sb = collect_side(
            trace_b,
            key="b",
            label=d.label_b,
            top=top,
            name_kind=name,
            palette=palette,
            omitted=omitted,
            stakeout=False,
        )
        context.update(
            mode="diff",
            title=title or f"tracelens report: {d.label_a} → {d.label_b}",
            sides=[sa, sb],
            diff=_diff_view(
                d, trace_a, trace_b, top=top, name_kind=name, palette=palette, omitted=omitted
            ),
        )
    for side in context["sides"]:
        if side.timeline:
            for n in side.timeline.notes:
                omitted.append(Omitted(f"{side.label}: timeline", n))
    context["omitted"] = omitted
    context["legend"] = _page_legend(context["sides"], palette)
    html = _environment().get_template("report.html.j2").render(**context)
    return html


def _page_legend(sides: list[Side], palette: svg.Palette) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for s in sides:
        for c in s.categories:
            seen.setdefault(c.category, c.color)
        if s.timeline:
            for c, color in s.timeline.legend:
                seen.setdefault(c, color)
    return list(seen.items())


# -- the diff part -------------------------------------------------------------------------------
@dataclass
class DiffView:
    d: Any
    clues: list[Any]  # the evidence board, strongest first
    summary: list[tuple[str, str, str]]  # (label, value, css class)
    totals: list[list[str]]
    categories: list[dict[str, Any]]
    category_chart: Markup
    kernels: list[dict[str, Any]]
    kernel_chart: Markup
    legend: Markup
    stakeout: list[StakeoutRow]
    variants: list[dict[str, Any]]
    copies: list[dict[str, Any]]
    alignment: list[dict[str, Any]]
    danger: list[dict[str, Any]]
    kernels_more: int


def _diff_view(
    d: TraceDiff,
    ta: Trace,
    tb: Trace,
    *,
    top: int,
    name_kind: str,
    palette: svg.Palette,
    omitted: list[Omitted],
) -> DiffView:
    from .compare.render import _totals_rows

    figures = d.figures
    totals = {r["metric"]: r for r in d.totals.iter_rows(named=True)}
    kt = totals.get("kernel time (ns)", {})
    kl = totals.get("kernel launches", {})
    strong = sum(1 for c in d.clues if c.strength == "strong")
    summary = [
        (
            "kernel time",
            f"{fmt_ns(kt.get('a'))} → {fmt_ns(kt.get('b'))}",
            _ratio_class(kt.get("ratio")),
        ),
        ("B / A", fmt_ratio(kt.get("ratio")), _ratio_class(kt.get("ratio"))),
        ("launches", f"{_count(kl.get('a'))} → {_count(kl.get('b'))}", ""),
        (
            "kernels only in A / B",
            f"{int(figures.get('vanished_kernels', 0))} / {int(figures.get('new_kernels', 0))}",
            "",
        ),
        ("clues", f"{len(d.clues)} ({strong} strong)", "up" if strong else ""),
        (
            "danger-zone changes",
            str(int(figures.get("new_danger", 0) + figures.get("vanished_danger", 0))),
            "up" if figures.get("new_danger", 0) else "",
        ),
    ]
    categories = []
    for r in d.categories.iter_rows(named=True):
        categories.append({**r, "color": palette(r["category"])})
    cat_rows = sorted(categories, key=lambda r: -max(r["a_total_ns"], r["b_total_ns"]))
    category_chart = svg.paired_hbars(
        [
            svg.PairBar(
                label=r["category"],
                a=r["a_total_ns"],
                b=r["b_total_ns"],
                color=r["color"],
                right=f"{fmt_ns(r['a_total_ns'])} → {fmt_ns(r['b_total_ns'])}  "
                f"{fmt_ratio(r['total_ratio'])}",
                tip=f"{r['category']}: {r['a_calls']:,} → {r['b_calls']:,} calls, "
                f"{fmt_ns(r['a_total_ns'])} → {fmt_ns(r['b_total_ns'])}",
                emphasis=_ratio_class(r["total_ratio"]) != "",
            )
            for r in cat_rows[:CHART_ROWS]
        ],
        width=640,
        label_width=130,
        right_width=200,
    )
    kernels = []
    for r in d.kernels.head(top).iter_rows(named=True):
        family, fields = _decode(r["name"])
        kernels.append(
            {
                **r,
                "short": _short(r["name"]),
                "color": palette(r["category"]),
                "family": family,
                "fields": fields,
                "danger": _danger_hits(r["name"]),
            }
        )
    if d.kernels.height > top:
        omitted.append(
            Omitted(
                "diff: kernels",
                f"{d.kernels.height - top:,} more kernels with smaller changes are not listed; "
                "raise --top to see them",
            )
        )
    import polars as pl

    by_time = d.kernels.with_columns(_m=pl.max_horizontal("a_total_ns", "b_total_ns")).sort(
        "_m", descending=True
    )
    kernel_chart = svg.paired_hbars(
        [
            svg.PairBar(
                label=_short(r["name"]),
                a=r["a_total_ns"],
                b=r["b_total_ns"],
                color=palette(r["category"]),
                right=_pair_right(r),
                tip=f"{_short(r['name'], 200)}\n{r['category']} · calls {r['a_instances']:,} → "
                f"{r['b_instances']:,} · per call {fmt_ns(r['a_avg_ns'])} → {fmt_ns(r['b_avg_ns'])}",
                mono=True,
                emphasis=r["status"] != "both" or _ratio_class(r["per_call_ratio"]) != "",
            )
            for r in by_time.head(CHART_ROWS).iter_rows(named=True)
        ],
        width=WIDTH,
        label_width=420,
        right_width=250,
    )
    # Stakeout: the most surprising kernels both runs launch, then the biggest newcomers.
    both = d.kernels.filter(pl.col("status") == "both").head(STAKEOUT_KERNELS - 2)
    others = d.kernels.filter(pl.col("status") != "both").head(2)
    names = both["name"].to_list() + others["name"].to_list()
    ratios = dict(
        zip(d.kernels["name"].to_list(), d.kernels["per_call_ratio"].to_list(), strict=True)
    )
    stakeout = _stakeout([ta, tb], names, name_kind, palette, ratios)
    variants = list(d.variant_swaps.iter_rows(named=True))
    copies = list(d.copies.iter_rows(named=True))
    alignment = []
    for al in d.alignment:
        alignment.append(
            {
                "device": al.device,
                "launches_a": al.launches_a,
                "launches_b": al.launches_b,
                "matched": al.matched_in_order,
                "aligned": al.aligned,
                # 1-based, as people count and as the evidence board says it
                "first": None if al.first_divergence is None else al.first_divergence + 1,
                "a_at": _short(al.a_at_divergence, 70) if al.a_at_divergence else None,
                "b_at": _short(al.b_at_divergence, 70) if al.b_at_divergence else None,
                "replaced": [(_short(x, 60), _short(y, 60), n) for x, y, n in al.replaced[:5]],
                "only_a": [(_short(x, 60), n) for x, n in al.only_in_a[:3]],
                "only_b": [(_short(x, 60), n) for x, n in al.only_in_b[:3]],
                "truncated": al.truncated,
            }
        )
    danger = [{**r, "short": _short(r["name"])} for r in d.danger.iter_rows(named=True)]
    order = {"strong": 0, "moderate": 1, "weak": 2}
    clues = sorted(d.clues, key=lambda c: order.get(c.strength, 3))
    return DiffView(
        d=d,
        clues=clues,
        summary=summary,
        totals=_totals_rows(d),
        categories=categories,
        category_chart=category_chart,
        kernels=kernels,
        kernel_chart=kernel_chart,
        legend=svg.legend_pair(f"A: {d.label_a}", f"B: {d.label_b}"),
        stakeout=stakeout,
        variants=variants,
        copies=copies,
        alignment=alignment,
        danger=danger,
        kernels_more=max(d.kernels.height - top, 0),
    )


def _pair_right(r: dict[str, Any]) -> str:
    if r["status"] == "only_a":
        return f"{fmt_ns(r['a_total_ns'])} → gone (only in A)"
    if r["status"] == "only_b":
        return f"new in B: {fmt_ns(r['b_total_ns'])}"
    return (
        f"{fmt_ns(r['a_total_ns'])} → {fmt_ns(r['b_total_ns'])} · per call "
        f"{fmt_ratio(r['per_call_ratio'])}"
    )


# -- Markdown ----------------------------------------------------------------------------------
def build_markdown(
    trace_a: Trace,
    trace_b: Trace | None = None,
    *,
    top: int = 10,
    name: str = "demangled",
) -> str:
    """A compact Markdown summary: the diff's (evidence board first) for two traces; header,
    time by category, top kernels and danger-zone kernels for one."""
    _check_top(top)
    if trace_b is not None:
        from .compare import diff as compute
        from .compare.render import markdown

        return markdown(compute(trace_a, trace_b, name=name), top=top)
    return _single_markdown(trace_a, top=top, name_kind=name)


def _single_markdown(trace: Trace, *, top: int, name_kind: str) -> str:
    # Kernel names, GPU, process and file names come from the trace: escaped text, or code
    # spans (render.md_text / md_code, shared with every Markdown writer).
    from .render import md_code, md_text

    palette = svg.Palette()
    info = trace.info
    out = [f"## tracelens report: {md_code(trace.path.name)}", ""]
    names: dict[str, int] = {}
    for g in info.gpus:
        names[g.name or "unknown GPU"] = names.get(g.name or "unknown GPU", 0) + 1
    gpus = ", ".join((f"{n} × " if n > 1 else "") + k for k, n in names.items()) or "no GPU"
    out.append(
        f"nsys {md_text(info.nsys_version or 'unknown')}, "
        f"schema {md_text(info.schema_version or '—')} · "
        f"{md_text(gpus)} · span {fmt_ns(info.duration_ns)} · {info.count('kernel'):,} kernels, "
        f"{info.count('memcpy'):,} memcpys, {info.count('memset'):,} memsets, "
        f"{info.count('runtime'):,} CUDA API calls"
    )
    out.append("")
    try:
        trace.require_kernels()
    except MissingDataError:
        out += ["_No CUDA kernels in this export: nothing to summarize._", ""]
        return "\n".join(out)
    if info.count("kernel") == 0:
        out += ["_No CUDA kernels in this export: nothing to summarize._", ""]
        return "\n".join(out)
    census = trace.census(name=name_kind)
    total = int(census["total_ns"].sum())
    out += [f"Kernel time {fmt_ns(total)} in {census.height:,} distinct kernels.", ""]
    # The numbers of `tracelens lineup`: memcpy and memset time is in memory.
    cats = _category_rows(trace, palette, name_kind, subfamily=False)
    gpu_time = sum(c.total_ns for c in cats)
    out += [
        "### Time by category",
        "",
        f"GPU time {fmt_ns(gpu_time)}, kernels + memcpy + memset (as `tracelens lineup`).",
        "",
        "| Category | Share | Time | Calls |",
    ]
    out.append("| :--- | ---: | ---: | ---: |")
    for c in cats[:top]:
        out.append(
            f"| {md_text(c.category)} | {_share_pct(c.time_pct)} | {fmt_ns(c.total_ns)} | "
            f"{c.calls:,} |"
        )
    out += ["", "### Top kernels", ""]
    out.append("| Kernel | Category | Calls | Total | Avg | Share of kernel time |")
    out.append("| :--- | :--- | ---: | ---: | ---: | ---: |")
    for k in _kernel_rows(census.head(top), palette, total):
        out.append(
            f"| {md_code(_short(k.name, 70), table=True)} | {md_text(k.category)} | "
            f"{k.calls:,} | {fmt_ns(k.total_ns)} | {fmt_ns(k.avg_ns)} | {_pct(k.share)} |"
        )
    if census.height > top:
        out.append(f"\n_{census.height - top:,} more kernels not shown._")
    danger = _single_danger([], census)
    if danger:
        out += ["", "### Danger-zone kernels", "", "| Risk | Kernel | Rule | Calls | Time | Fix |"]
        out.append("| :--- | :--- | :--- | ---: | ---: | :--- |")
        for r in danger[:top]:
            out.append(
                f"| {md_text(r['level'])} | {md_code(_short(r['name'], 60), table=True)} | "
                f"{md_text(r['rule_id'])} | {_count(r['calls'])} | {fmt_ns(r['total_ns'])} | "
                f"{md_text(r['fix'])} |"
            )
    out.append("")
    return "\n".join(out)
