"""Why two runs differ: totals, categories, kernels, launch order, danger-zone kernels, and an
evidence board of clues derived from them by rules.

    with tracelens.open("bs1.sqlite") as a, tracelens.open("bs16.sqlite") as b:
        d = tracelens.diff(a, b)
        d.clues          # tuple[Clue]: what changed, the numbers, what it suggests
        d.kernels        # polars DataFrame, ranked by how surprising each change is

Nothing here prints; the CLI and the report render a ``TraceDiff``.
"""

from __future__ import annotations

import difflib
import math
import operator
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import UsageError
from .filters import EventFilter

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

# Launches per device that the in-order alignment looks at (difflib is quadratic in the
# worst case; the earliest launches are where a changed path first shows).
ALIGN_LIMIT = 20_000

COPY_KIND_LABELS = {
    0: "unknown copies",
    1: "host-to-device copies",
    2: "device-to-host copies",
    3: "host-to-array copies",
    4: "array-to-host copies",
    5: "array-to-array copies",
    6: "array-to-device copies",
    7: "device-to-array copies",
    8: "device-to-device copies",
    9: "host-to-host copies",
    10: "peer-to-peer copies",
    11: "unified host-to-device copies",
    12: "unified device-to-host copies",
    13: "unified device-to-device copies",
}


@dataclass(frozen=True)
class Clue:
    """One row of the evidence board."""

    id: str  # rule that produced it: per_call_outlier, variant_swap, copy_growth, ...
    clue: str  # what was seen, in a few words
    evidence: str  # the numbers, from both traces
    verdict: str  # what it suggests
    strength: str  # strong | moderate | weak
    anchor: str  # id of the table that supports it (report links), e.g. "kernels"


@dataclass(frozen=True)
class SequenceAlignment:
    """How the in-order launch sequences of one device compare."""

    device: int
    launches_a: int
    launches_b: int
    aligned: int  # launches compared (the first ALIGN_LIMIT per device)
    matched_in_order: int  # launches that match, in order (longest matching blocks)
    first_divergence: int | None  # 0-based index of the first differing launch (None: same);
    # shown 1-based ("launch #4") everywhere people read it
    a_at_divergence: str | None
    b_at_divergence: str | None
    replaced: tuple[tuple[str, str, int], ...]  # (name in A, name in B, launches) most common
    only_in_a: tuple[tuple[str, int], ...]  # launches A makes where B makes none
    only_in_b: tuple[tuple[str, int], ...]
    truncated: bool  # True when more than ALIGN_LIMIT launches were not aligned

    @property
    def identical(self) -> bool:
        return self.first_divergence is None


@dataclass
class TraceDiff:
    """Everything ``tracelens diff`` shows. Times in ns; ratios are B / A."""

    label_a: str
    label_b: str
    name_kind: str
    totals: pl.DataFrame  # metric, a, b, delta, ratio
    copies: pl.DataFrame  # copy kind: label, a/b count, bytes, ratios
    categories: pl.DataFrame  # per category: calls, total, ratios, delta
    kernels: pl.DataFrame  # per kernel, both sides, ranked by surprise
    variant_swaps: pl.DataFrame  # per category: kernels only in A / only in B and their time
    alignment: tuple[SequenceAlignment, ...]
    danger: pl.DataFrame  # danger-zone kernels that appear, vanish, grow or shrink
    clues: tuple[Clue, ...]
    figures: dict[str, float]  # named numbers for --fail-if gates
    comparable: bool
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {
            "a": self.label_a,
            "b": self.label_b,
            "name_kind": self.name_kind,
            "comparable": self.comparable,
            "notes": list(self.notes),
            "clues": [asdict(c) for c in self.clues],
            "figures": self.figures,
            "totals": self.totals.to_dicts(),
            "copies": self.copies.to_dicts(),
            "categories": self.categories.to_dicts(),
            "kernels": self.kernels.to_dicts(),
            "variant_swaps": self.variant_swaps.to_dicts(),
            "alignment": [asdict(a) for a in self.alignment],
            "danger": self.danger.to_dicts(),
        }


# -- helpers -------------------------------------------------------------------------------
def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    if a == 0:
        return None if b == 0 else math.inf
    return b / a


def fmt_ns(ns: float | None) -> str:
    """A duration for people: 1.20 ms, 88.0 ms, 3.41 s."""
    if ns is None:
        return "—"
    for unit, factor in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= factor:
            v = ns / factor
            return f"{v:,.2f} {unit}" if abs(v) < 100 else f"{v:,.1f} {unit}"
    return f"{ns:,.0f} ns"


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "—"
    for unit, factor in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= factor:
            return f"{n / factor:,.1f} {unit}"
    return f"{n:,.0f} B"


def fmt_ratio(r: float | None) -> str:
    if r is None:
        return "—"
    if math.isinf(r):
        return "new"
    return f"{r:.2f}×"


def _pct_change(r: float | None) -> str:
    if r is None or math.isinf(r):
        return "new"
    return f"{(r - 1) * 100:+.0f}%"


def _typical_ratio(kernels: pl.DataFrame) -> float:
    import polars as pl

    both = kernels.filter(
        (pl.col("a_instances") > 0) & (pl.col("b_instances") > 0) & (pl.col("a_avg_ns") > 0)
    ).select(
        ratio=pl.col("b_avg_ns") / pl.col("a_avg_ns"),
        weight=pl.col("a_total_ns") + pl.col("b_total_ns"),
    )
    if both.height == 0 or both["weight"].sum() == 0:
        return 1.0
    rows = sorted(both.iter_rows())
    half = sum(w for _, w in rows) / 2
    acc = 0
    for ratio, weight in rows:
        acc += weight
        if acc >= half:
            return float(ratio)
    return float(rows[-1][0])


def _category_overlap(kernels: pl.DataFrame) -> float:
    """Share of launches whose category both runs launch as often (min over max, summed)."""
    by_cat: dict[str, list[int]] = {}
    for cat, a, b in kernels.select("category", "a_instances", "b_instances").iter_rows():
        acc = by_cat.setdefault(cat, [0, 0])
        acc[0] += a
        acc[1] += b
    both = sum(min(a, b) for a, b in by_cat.values())
    most = max(sum(a for a, _ in by_cat.values()), sum(b for _, b in by_cat.values()))
    return both / most if most else 0.0


def _count(n: int) -> str:
    return f"{n:,}"


# -- per-side data --------------------------------------------------------------------------
@dataclass
class _Side:
    totals: dict[str, int | None]
    census: pl.DataFrame  # name, instances, total_ns, avg_ns, med_ns, ...
    copies: dict[int, dict[str, int]]
    sequences: dict[int, list[str]]
    launches_per_device: dict[int, int]
    blocks: dict[str, float]  # mean thread blocks per launch, per kernel name
    graph: tuple[int, int]  # CUDA graph replays traced at graph level: (count, ns)


def _collect(trace: Trace, name_kind: str, where: EventFilter) -> _Side:
    from .census import kernel_summary

    trace.require_kernels()
    window = {"start_ns": where.start_ns, "end_ns": where.end_ns}
    totals = trace.query("trace_totals", **window).to_dicts()[0]
    census = kernel_summary(trace, name=name_kind, where=where)
    copies = {r["copy_kind"]: r for r in trace.query("copy_kinds", **window).iter_rows(named=True)}
    seq = trace.query("launch_sequence", name_kind=name_kind, limit=ALIGN_LIMIT, **window)
    sequences: dict[int, list[str]] = {}
    for device, name in seq.select("device", "name").iter_rows():
        sequences.setdefault(device, []).append(name)
    launches = dict(trace.query("launches_per_device", **window).iter_rows())
    blocks = {
        name: avg
        for name, avg, _threads in trace.query(
            "kernel_blocks", name_kind=name_kind, **window
        ).iter_rows()
    }
    graph = trace.graph_replays(where)
    return _Side(totals, census, copies, sequences, launches, blocks, graph)


# -- alignment -----------------------------------------------------------------------------
def align_sequences(
    device: int, a: list[str], b: list[str], launches_a: int, launches_b: int
) -> SequenceAlignment:
    """Compare two in-order launch sequences (names) of one device."""
    ids: dict[str, int] = {}
    ia = [ids.setdefault(n, len(ids)) for n in a]
    ib = [ids.setdefault(n, len(ids)) for n in b]
    matcher = difflib.SequenceMatcher(None, ia, ib, autojunk=False)
    matched = sum(block.size for block in matcher.get_matching_blocks())
    first = None
    a_at = b_at = None
    replaced: Counter[tuple[str, str]] = Counter()
    only_a: Counter[str] = Counter()
    only_b: Counter[str] = Counter()
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if first is None:
            first = i1
            a_at = a[i1] if i1 < len(a) else None
            b_at = b[j1] if j1 < len(b) else None
        if tag == "replace":
            for x, y in zip(a[i1:i2], b[j1:j2], strict=False):
                replaced[(x, y)] += 1
            for x in a[i1 + (j2 - j1) : i2]:
                only_a[x] += 1
            for y in b[j1 + (i2 - i1) : j2]:
                only_b[y] += 1
        elif tag == "delete":
            only_a.update(a[i1:i2])
        elif tag == "insert":
            only_b.update(b[j1:j2])
    if first is None and launches_a != launches_b:
        first = min(len(a), len(b))
    return SequenceAlignment(
        device=device,
        launches_a=launches_a,
        launches_b=launches_b,
        aligned=max(len(a), len(b)),
        matched_in_order=matched,
        first_divergence=first,
        a_at_divergence=a_at,
        b_at_divergence=b_at,
        replaced=tuple((x, y, n) for (x, y), n in replaced.most_common(10)),
        only_in_a=tuple(only_a.most_common(10)),
        only_in_b=tuple(only_b.most_common(10)),
        truncated=max(launches_a, launches_b) > ALIGN_LIMIT,
    )


# -- the diff ------------------------------------------------------------------------------
def diff(
    a: Trace,
    b: Trace,
    *,
    name: str = "demangled",
    where_a: EventFilter | None = None,
    where_b: EventFilter | None = None,
    label_a: str | None = None,
    label_b: str | None = None,
) -> TraceDiff:
    """Compare trace ``a`` (the baseline) with ``b``. Ratios are B / A."""
    import polars as pl

    from .categories import classify
    from .census import check_name_kind

    if name not in ("demangled", "short"):
        raise UsageError(f"unknown --name {name!r}; use one of: demangled, short")
    check_name_kind(name)
    sa = _collect(a, name, where_a or EventFilter())
    sb = _collect(b, name, where_b or EventFilter())
    label_a = label_a or a.path.name
    label_b = label_b or b.path.name
    if label_a == label_b:
        label_a, label_b = f"A ({label_a})", f"B ({label_b})"

    # Totals ------------------------------------------------------------------------------
    metrics = [
        ("kernel_launches", "kernel launches"),
        ("distinct_kernels", "distinct kernels"),
        ("kernel_time_ns", "kernel time (ns)"),
        ("gpu_busy_ns", "GPU busy (ns)"),
        ("memcpy_count", "memcpy count"),
        ("memcpy_bytes", "memcpy bytes"),
        ("memset_count", "memset count"),
        ("memset_bytes", "memset bytes"),
        ("runtime_calls", "CUDA API calls"),
        ("span_ns", "wall span (ns)"),
    ]
    totals = pl.DataFrame(
        {
            "metric": [label for _, label in metrics],
            "a": [sa.totals[k] or 0 for k, _ in metrics],
            "b": [sb.totals[k] or 0 for k, _ in metrics],
        },
        schema={"metric": pl.String, "a": pl.Int64, "b": pl.Int64},
    ).with_columns(
        delta=pl.col("b") - pl.col("a"),
        ratio=pl.when(pl.col("a") != 0).then(pl.col("b") / pl.col("a")).otherwise(None),
    )

    # Copies by kind ------------------------------------------------------------------------
    kinds = sorted(set(sa.copies) | set(sb.copies))
    copies = pl.DataFrame(
        {
            "copy_kind": kinds,
            "operation": [COPY_KIND_LABELS.get(k, f"copy kind {k}") for k in kinds],
            "a_count": [sa.copies.get(k, {}).get("count", 0) for k in kinds],
            "b_count": [sb.copies.get(k, {}).get("count", 0) for k in kinds],
            "a_bytes": [sa.copies.get(k, {}).get("bytes", 0) for k in kinds],
            "b_bytes": [sb.copies.get(k, {}).get("bytes", 0) for k in kinds],
        },
        schema={
            "copy_kind": pl.Int64,
            "operation": pl.String,
            "a_count": pl.Int64,
            "b_count": pl.Int64,
            "a_bytes": pl.Int64,
            "b_bytes": pl.Int64,
        },
    ).with_columns(
        count_ratio=pl.when(pl.col("a_count") != 0).then(pl.col("b_count") / pl.col("a_count")),
        bytes_ratio=pl.when(pl.col("a_bytes") != 0).then(pl.col("b_bytes") / pl.col("a_bytes")),
    )

    # Kernels -------------------------------------------------------------------------------
    cols = ["name", "instances", "total_ns", "avg_ns", "med_ns"]
    ka = sa.census.select(cols).rename({c: f"a_{c}" for c in cols[1:]})
    kb = sb.census.select(cols).rename({c: f"b_{c}" for c in cols[1:]})
    kernels = ka.join(kb, on="name", how="full", coalesce=True)
    names = kernels["name"].to_list()
    cats = {n: classify(n) for n in names}
    kernels = kernels.with_columns(
        category=pl.Series([cats[n].category for n in names], dtype=pl.String),
        subfamily=pl.Series([cats[n].subfamily for n in names], dtype=pl.String),
    ).with_columns(
        pl.col("a_instances").fill_null(0),
        pl.col("b_instances").fill_null(0),
        pl.col("a_total_ns").fill_null(0),
        pl.col("b_total_ns").fill_null(0),
    )
    time_a = int(kernels["a_total_ns"].sum())
    time_b = int(kernels["b_total_ns"].sum())
    launches_a = int(kernels["a_instances"].sum())
    launches_b = int(kernels["b_instances"].sum())
    # The typical change per call: the time-weighted median of the per-call ratios of the
    # kernels both runs launch. A kernel that changes by just this much is unsurprising
    # (everything got slower or faster together); swapped kernels don't bias it.
    overall = _typical_ratio(kernels)
    grand = (time_a + time_b) or 1
    kernels = kernels.with_columns(
        status=pl.when(pl.col("a_instances") == 0)
        .then(pl.lit("only_b"))
        .when(pl.col("b_instances") == 0)
        .then(pl.lit("only_a"))
        .otherwise(pl.lit("both")),
        per_call_ratio=pl.when((pl.col("a_instances") > 0) & (pl.col("b_instances") > 0))
        .then(pl.col("b_avg_ns") / pl.col("a_avg_ns"))
        .otherwise(None),
        total_ratio=pl.when(pl.col("a_total_ns") > 0)
        .then(pl.col("b_total_ns") / pl.col("a_total_ns"))
        .otherwise(None),
        delta_ns=pl.col("b_total_ns") - pl.col("a_total_ns"),
        share=(pl.col("a_total_ns") + pl.col("b_total_ns")) / grand,
    )
    # Surprise: how far a kernel's per-call change is from the trace-wide change, in log
    # space, weighted by its share of GPU time. Kernels that appear or vanish score their
    # share: appearing is as surprising as doubling.
    kernels = kernels.with_columns(
        surprise=pl.when(pl.col("status") == "both")
        .then(
            (pl.col("per_call_ratio") / overall).log().abs() * pl.col("share")
            + (pl.col("b_instances") / pl.col("a_instances")).log().abs() * pl.col("share") / 4
        )
        .otherwise(pl.col("share") * math.log(2))
    ).sort(["surprise", "name"], descending=[True, False])
    kernels = kernels.select(
        "name",
        "category",
        "subfamily",
        "status",
        "a_instances",
        "b_instances",
        "a_total_ns",
        "b_total_ns",
        "a_avg_ns",
        "b_avg_ns",
        "a_med_ns",
        "b_med_ns",
        "per_call_ratio",
        "total_ratio",
        "delta_ns",
        "surprise",
    )

    # Categories ----------------------------------------------------------------------------
    categories = (
        kernels.group_by("category")
        .agg(
            pl.col("a_instances").sum().alias("a_calls"),
            pl.col("b_instances").sum().alias("b_calls"),
            pl.col("a_total_ns").sum().alias("a_total_ns"),
            pl.col("b_total_ns").sum().alias("b_total_ns"),
            (pl.col("status") == "only_a").sum().alias("kernels_only_a"),
            (pl.col("status") == "only_b").sum().alias("kernels_only_b"),
        )
        .with_columns(
            a_avg_ns=pl.when(pl.col("a_calls") > 0).then(pl.col("a_total_ns") / pl.col("a_calls")),
            b_avg_ns=pl.when(pl.col("b_calls") > 0).then(pl.col("b_total_ns") / pl.col("b_calls")),
            total_ratio=pl.when(pl.col("a_total_ns") > 0).then(
                pl.col("b_total_ns") / pl.col("a_total_ns")
            ),
            delta_ns=pl.col("b_total_ns") - pl.col("a_total_ns"),
        )
        .with_columns(per_call_ratio=pl.col("b_avg_ns") / pl.col("a_avg_ns"))
        .sort(["delta_ns", "category"], descending=[True, False])
    )

    # Variant swaps: kernels of one category that only one side runs --------------------------
    variant_swaps = (
        kernels.filter(pl.col("status") != "both")
        .group_by("category")
        .agg(
            (pl.col("status") == "only_a").sum().alias("only_a_kernels"),
            pl.when(pl.col("status") == "only_a")
            .then(pl.col("a_total_ns"))
            .sum()
            .alias("only_a_ns"),
            pl.when(pl.col("status") == "only_a")
            .then(pl.col("a_instances"))
            .sum()
            .alias("only_a_calls"),
            (pl.col("status") == "only_b").sum().alias("only_b_kernels"),
            pl.when(pl.col("status") == "only_b")
            .then(pl.col("b_total_ns"))
            .sum()
            .alias("only_b_ns"),
            pl.when(pl.col("status") == "only_b")
            .then(pl.col("b_instances"))
            .sum()
            .alias("only_b_calls"),
        )
        .sort(["only_b_ns", "category"], descending=[True, False])
    )

    # Launch-sequence alignment --------------------------------------------------------------
    devices = sorted(set(sa.launches_per_device) | set(sb.launches_per_device))
    alignment = tuple(
        align_sequences(
            d,
            sa.sequences.get(d, []),
            sb.sequences.get(d, []),
            sa.launches_per_device.get(d, 0),
            sb.launches_per_device.get(d, 0),
        )
        for d in devices
    )

    # Danger-zone kernels ------------------------------------------------------------------
    danger = _danger_changes(kernels)

    # Comparability: do the runs share their kernels? By launches, not time: a GEMM swap can
    # move most of the time into kernels only one side runs while the program is the same.
    both = kernels.filter(pl.col("status") == "both")
    launches_both = int(both["a_instances"].sum() + both["b_instances"].sum())
    launch_overlap = launches_both / ((launches_a + launches_b) or 1)
    overlap = float((both["a_total_ns"].sum() + both["b_total_ns"].sum()) / grand) if grand else 0.0
    # A short window where every kernel was swapped (same launches, other kernels) is still
    # the same program: fall back on launch counts and the category mix.
    cat_overlap = _category_overlap(kernels)
    same_shape = (
        min(launches_a, launches_b) >= 5
        and 0.9 <= (launches_b / launches_a if launches_a else 0) <= 1.1
        and cat_overlap >= 0.8
    )
    comparable = (launch_overlap >= 0.2 or same_shape) and bool(time_a) and bool(time_b)

    figures = _figures(sa, sb, totals, copies, kernels, danger, alignment, overlap)
    figures["launch_overlap"] = float(launch_overlap)
    clues = _clues(
        sa,
        sb,
        copies,
        kernels,
        variant_swaps,
        alignment,
        danger,
        overall,
        launch_overlap,
        comparable,
    )
    figures["clues"] = float(len(clues))
    notes = []
    if any(al.truncated for al in alignment):
        notes.append(f"launch order compared for the first {ALIGN_LIMIT:,} launches per device")
    return TraceDiff(
        label_a=label_a,
        label_b=label_b,
        name_kind=name,
        totals=totals,
        copies=copies,
        categories=categories,
        kernels=kernels,
        variant_swaps=variant_swaps,
        alignment=alignment,
        danger=danger,
        clues=tuple(clues),
        figures=figures,
        comparable=comparable,
        notes=tuple(notes),
    )


def _danger_changes(kernels: pl.DataFrame) -> pl.DataFrame:
    import polars as pl

    from .danger import match_danger

    rows = []
    for r in kernels.iter_rows(named=True):
        for hit in match_danger(r["name"]):
            a_ns, b_ns = r["a_total_ns"], r["b_total_ns"]
            if r["status"] == "only_b":
                status = "new"
            elif r["status"] == "only_a":
                status = "vanished"
            elif b_ns > a_ns * 1.2:
                status = "grew"
            elif b_ns < a_ns / 1.2:
                status = "shrank"
            else:
                status = "same"
            rows.append(
                {
                    "rule_id": hit.rule_id,
                    "level": hit.level,
                    "status": status,
                    "name": r["name"],
                    "a_calls": r["a_instances"],
                    "b_calls": r["b_instances"],
                    "a_total_ns": a_ns,
                    "b_total_ns": b_ns,
                    "why": hit.why,
                    "fix": hit.fix,
                }
            )
    schema = {
        "rule_id": pl.String,
        "level": pl.String,
        "status": pl.String,
        "name": pl.String,
        "a_calls": pl.Int64,
        "b_calls": pl.Int64,
        "a_total_ns": pl.Int64,
        "b_total_ns": pl.Int64,
        "why": pl.String,
        "fix": pl.String,
    }
    order = {"high": 0, "medium": 1, "info": 2}
    status_order = {"new": 0, "grew": 1, "vanished": 2, "shrank": 3, "same": 4}
    rows.sort(
        key=lambda r: (
            order.get(r["level"], 9),
            status_order[r["status"]],
            -r["b_total_ns"],
            r["name"],
        )
    )
    return pl.DataFrame(rows, schema=schema)


def _figures(sa, sb, totals, copies, kernels, danger, alignment, overlap) -> dict[str, float]:
    import polars as pl

    def r(a, b):
        v = _ratio(a, b)
        return float("inf") if v is None and b else (1.0 if v is None else float(v))

    d2d = copies.filter(pl.col("copy_kind") == 8)
    d2d_a = int(d2d["a_count"].sum()) if d2d.height else 0
    d2d_b = int(d2d["b_count"].sum()) if d2d.height else 0
    d2d_ba = int(d2d["a_bytes"].sum()) if d2d.height else 0
    d2d_bb = int(d2d["b_bytes"].sum()) if d2d.height else 0
    both = kernels.filter(pl.col("status") == "both")
    risky = danger.filter(pl.col("level").is_in(["high", "medium"]))
    return {
        "gpu_time_ratio": r(sa.totals["kernel_time_ns"], sb.totals["kernel_time_ns"]),
        "gpu_busy_ratio": r(sa.totals["gpu_busy_ns"], sb.totals["gpu_busy_ns"]),
        "launch_ratio": r(sa.totals["kernel_launches"], sb.totals["kernel_launches"]),
        "launches_a": float(sa.totals["kernel_launches"]),
        "launches_b": float(sb.totals["kernel_launches"]),
        "distinct_kernels_ratio": r(sa.totals["distinct_kernels"], sb.totals["distinct_kernels"]),
        "new_kernels": float((kernels["status"] == "only_b").sum()),
        "vanished_kernels": float((kernels["status"] == "only_a").sum()),
        "max_per_call_ratio": float(both["per_call_ratio"].max()) if both.height else 1.0,
        "memcpy_count_ratio": r(sa.totals["memcpy_count"], sb.totals["memcpy_count"]),
        "memcpy_bytes_ratio": r(sa.totals["memcpy_bytes"], sb.totals["memcpy_bytes"]),
        "d2d_count_ratio": r(d2d_a, d2d_b),
        "d2d_bytes_ratio": r(d2d_ba, d2d_bb),
        "memset_count_ratio": r(sa.totals["memset_count"], sb.totals["memset_count"]),
        "span_ratio": r(sa.totals["span_ns"], sb.totals["span_ns"]),
        "new_danger": float((risky["status"] == "new").sum()),
        "vanished_danger": float((risky["status"] == "vanished").sum()),
        "danger_high_b": float(
            danger.filter((pl.col("level") == "high") & (pl.col("b_calls") > 0)).height
        ),
        "diverged_devices": float(sum(1 for al in alignment if not al.identical)),
        "time_overlap": float(overlap),
    }


def _clues(
    sa, sb, copies, kernels, swaps, alignment, danger, overall, overlap, comparable
) -> list[Clue]:
    import polars as pl

    clues: list[Clue] = []
    la, lb = "A", "B"
    time_a = sa.totals["kernel_time_ns"] or 0
    time_b = sb.totals["kernel_time_ns"] or 0
    launches_a = sa.totals["kernel_launches"] or 0
    launches_b = sb.totals["kernel_launches"] or 0

    if not comparable:
        clues.append(
            Clue(
                "not_comparable",
                "the traces are not comparable",
                f"only {overlap:.0%} of kernel launches are of kernels both traces run "
                f"({_count(launches_a)} vs {_count(launches_b)} launches)",
                "these look like different programs or phases: compare runs of the same workload, "
                "or narrow both sides to the same NVTX range or time window",
                "strong",
                "kernels",
            )
        )
        return clues

    # Work the kernel tables do not show: CUDA graphs traced at graph level.
    (ga, ga_ns), (gb, gb_ns) = sa.graph, sb.graph
    if ga or gb:
        clues.append(
            Clue(
                "graph_replays_hidden",
                "CUDA graph replays are not broken down by kernel",
                f"A: {_count(ga)} replays ({fmt_ns(ga_ns)}), B: {_count(gb)} replays ({fmt_ns(gb_ns)}) "
                "traced at graph level; their kernels, copies and memsets are in no table",
                "every kernel figure here leaves that GPU time out; profile both runs with "
                "--cuda-graph-trace=node to compare what runs inside the graphs",
                "weak",
                "totals",
            )
        )

    # Different amounts of work: totals mislead, per-call figures don't.
    launch_r = _ratio(launches_a, launches_b) or 1.0
    # Same launch count, longer span: the same work taking longer, which is the question,
    # not a reason to distrust the comparison.
    if not (0.67 <= launch_r <= 1.5):
        clues.append(
            Clue(
                "weak_evidence",
                "the traces cover different amounts of work",
                f"launches {_count(launches_a)} → {_count(launches_b)} ({fmt_ratio(launch_r)}), "
                f"wall span {fmt_ns(sa.totals['span_ns'])} → {fmt_ns(sb.totals['span_ns'])}",
                "totals are not comparable as they stand; read the per-call columns "
                "(or narrow both sides to one step with --a-start/--a-end and --b-start/--b-end)",
                "weak",
                "totals",
            )
        )

    # Per-call outliers: same kernel, changed cost per call, beyond the trace-wide change.
    both = kernels.filter(pl.col("status") == "both")
    outliers = both.filter(
        (
            (pl.col("per_call_ratio") / overall >= 1.5)
            | (pl.col("per_call_ratio") / overall <= 1 / 1.5)
        )
        & ((pl.col("a_total_ns") + pl.col("b_total_ns")) >= 0.001 * (time_a + time_b))
    ).head(3)
    for r in outliers.iter_rows(named=True):
        same_calls = r["a_instances"] == r["b_instances"]
        calls = (
            f"{_count(r['a_instances'])} calls in both"
            if same_calls
            else f"calls {_count(r['a_instances'])} → {_count(r['b_instances'])}"
        )
        ratio = r["per_call_ratio"]
        word = f"{ratio:.2f}× longer" if ratio >= 1 else f"{1 / ratio:.2f}× shorter"
        attention = r["category"] == "attention"
        # Did each call get more work? The grid (thread blocks per launch) says so.
        blocks_a, blocks_b = sa.blocks.get(r["name"]), sb.blocks.get(r["name"])
        blocks_r = _ratio(blocks_a, blocks_b)
        grid = ""
        if blocks_r is not None and not math.isinf(blocks_r) and not 1 / 1.2 < blocks_r < 1.2:
            grid = f"; blocks per launch {blocks_a:,.0f} → {blocks_b:,.0f} ({fmt_ratio(blocks_r)})"
            cause = (
                f"each call launches {fmt_ratio(blocks_r)} the blocks, so it does more (or less) "
                "work per call: the inputs of this kernel changed size"
                + (" (e.g. more tokens through the attention path)" if attention else "")
                + " while most kernels kept their cost"
            )
        else:
            cause = (
                "with the same launch grid, so the same kind of work got slower or faster per "
                "call: "
                + (
                    "the attention path changed (e.g. cascade or split-KV attention, another KV "
                    "layout)"
                    if attention
                    else "its inputs' contents or a different code path inside it"
                )
            )
        clues.append(
            Clue(
                "per_call_outlier",
                f"{_short(r['name'])}: {word} per call"
                + (" (attention-related)" if attention else ""),
                f"{calls}; {fmt_ns(r['a_total_ns'])} → {fmt_ns(r['b_total_ns'])} total; "
                f"per call {fmt_ns(r['a_avg_ns'])} → {fmt_ns(r['b_avg_ns'])}, while the typical "
                f"kernel changed {fmt_ratio(overall)}{grid}",
                f"far off the typical change, {cause}",
                "strong" if same_calls else "moderate",
                "kernels",
            )
        )

    # A change that hits every kernel alike: no single kernel stands out, the run does.
    if both.height and not 1 / 1.2 < overall < 1.2:
        slower = overall > 1
        clues.append(
            Clue(
                "uniform_change",
                f"the typical kernel is {overall:.2f}× longer per call"
                if slower
                else f"the typical kernel is {1 / overall:.2f}× shorter per call",
                f"time-weighted median of the per-call ratios of the {both.height} kernels both "
                f"runs launch; kernel time {fmt_ns(time_a)} → {fmt_ns(time_b)} "
                f"with launches {_count(launches_a)} → {_count(launches_b)}",
                "the whole GPU side got "
                + ("slower" if slower else "faster")
                + " alike: clocks or power limits, another GPU model, contention from other work "
                "on the GPU, or larger inputs everywhere, rather than one kernel",
                "strong",
                "kernels",
            )
        )

    # Variant swaps within a category.
    for r in swaps.iter_rows(named=True):
        if r["only_b_kernels"] == 0 and r["only_a_kernels"] == 0:
            continue
        share = (r["only_a_ns"] + r["only_b_ns"]) / ((time_a + time_b) or 1)
        if share < 0.005:
            continue
        cat = r["category"]
        parts = []
        if r["only_b_kernels"]:
            parts.append(
                f"{r['only_b_kernels']} {cat} kernel{'s' if r['only_b_kernels'] != 1 else ''} in {lb} "
                f"({fmt_ns(r['only_b_ns'])}, {_count(r['only_b_calls'])} calls) that {la} does not run"
            )
        if r["only_a_kernels"]:
            parts.append(
                f"{la} ran {r['only_a_kernels']} other{'s' if r['only_a_kernels'] != 1 else ''} "
                f"({fmt_ns(r['only_a_ns'])}, {_count(r['only_a_calls'])} calls)"
            )
        swapped = r["only_a_kernels"] and r["only_b_kernels"]
        if cat == "gemm":
            verdict = (
                "the GEMM library picked other kernels for these shapes (its heuristic depends on "
                "batch size): different tiling/split-K means different rounding, so results are "
                "not batch-invariant"
            )
        elif swapped:
            verdict = f"a different {cat} implementation ran: same role, different kernels"
        else:
            verdict = f"{cat} work that only one run does"
        clues.append(
            Clue(
                "variant_swap"
                if swapped
                else ("new_kernels" if r["only_b_kernels"] else "vanished_kernels"),
                f"{cat}: {'variants swapped' if swapped else ('kernels appear' if r['only_b_kernels'] else 'kernels vanish')}",
                "; ".join(parts),
                verdict,
                "strong" if swapped and share >= 0.05 else "moderate",
                "variants",
            )
        )

    # Copies and memsets.
    for r in copies.iter_rows(named=True):
        cr, br = _ratio(r["a_count"], r["b_count"]), _ratio(r["a_bytes"], r["b_bytes"])
        # Small absolute amounts are noise: need 5 copies or 1 MB on one side to speak.
        many = max(r["a_count"], r["b_count"]) >= 5
        big = max(r["a_bytes"], r["b_bytes"]) >= 1_000_000
        count_moved = many and cr is not None and (cr >= 1.2 or cr <= 1 / 1.2)
        bytes_moved = big and br is not None and (br >= 1.2 or br <= 1 / 1.2)
        if not (count_moved or bytes_moved):
            continue
        grew = (cr or 1) >= 1.2 or (br or 1) >= 1.2
        dtod = r["copy_kind"] == 8
        clues.append(
            Clue(
                "copy_growth" if grew else "copy_shrink",
                f"{_pct_change(cr)} {r['operation']}"
                if count_moved
                else f"{r['operation']}: {fmt_ratio(br)} the bytes",
                f"{_count(r['a_count'])} → {_count(r['b_count'])} copies, "
                f"{fmt_bytes(r['a_bytes'])} → {fmt_bytes(r['b_bytes'])}",
                (
                    "more data moved on the GPU: extra buffers or gathers on the new path "
                    "(e.g. KV-cache copies, a prefix/suffix split)"
                    if dtod and grew
                    else "the program moves data differently between the runs"
                ),
                "moderate",
                "copies",
            )
        )
    ma, mb = sa.totals["memset_count"] or 0, sb.totals["memset_count"] or 0
    mr = _ratio(ma, mb)
    if max(ma, mb) >= 5 and mr is not None and (mr >= 1.2 or mr <= 1 / 1.2):
        clues.append(
            Clue(
                "memset_growth" if mr > 1 else "memset_shrink",
                f"{_pct_change(mr)} memsets",
                f"{_count(ma)} → {_count(mb)} memsets, "
                f"{fmt_bytes(sa.totals['memset_bytes'])} → {fmt_bytes(sb.totals['memset_bytes'])}",
                "buffers are zeroed more (or less) often: workspaces of another algorithm "
                "(split-K partial sums, attention scratch) are being set up",
                "moderate",
                "totals",
            )
        )

    # Launch structure.
    diverged = [al for al in alignment if not al.identical]
    if diverged:
        al = max(diverged, key=lambda x: x.aligned - x.matched_in_order)
        differing = al.aligned - al.matched_in_order
        same_count = launches_a == launches_b
        where = f"first divergence at launch #{al.first_divergence + 1:,} on device {al.device}" + (
            f" ({_short(al.a_at_divergence)} in A, {_short(al.b_at_divergence)} in B)"
            if al.a_at_divergence and al.b_at_divergence
            else ""
        )
        if same_count:
            clues.append(
                Clue(
                    "same_count_different_path",
                    f"same launch count ({_count(launches_a)} in both), different kernels",
                    f"{where}; {_count(al.matched_in_order)} of {_count(al.aligned)} launches match in order, "
                    f"{_count(differing)} differ",
                    "same graph, different path: the program made the same launches, but other "
                    "kernels ran in some of them: a library or framework chose another algorithm "
                    "(often by batch size or shape)",
                    "strong",
                    "alignment",
                )
            )
        else:
            clues.append(
                Clue(
                    "launch_sequence_diverges",
                    "the launch sequences diverge",
                    f"{where}; {_count(al.matched_in_order)} of {_count(al.aligned)} launches match in order",
                    "the runs take different paths from that launch on",
                    "moderate",
                    "alignment",
                )
            )

    # Danger-zone kernels: one clue per rule, kernels that appear/vanish/grow together.
    risky = danger.filter(
        pl.col("status").is_in(["new", "vanished", "grew"]) & (pl.col("level") != "info")
    )
    for rule_id in dict.fromkeys(risky["rule_id"].to_list()):
        rows = risky.filter(pl.col("rule_id") == rule_id).to_dicts()
        first = rows[0]
        parts = []
        for status, side in (
            ("new", f"only in {lb}"),
            ("vanished", f"only in {la}"),
            ("grew", "grew"),
        ):
            sel = [r for r in rows if r["status"] == status]
            if not sel:
                continue
            ns = sum(r["b_total_ns"] if status != "vanished" else r["a_total_ns"] for r in sel)
            calls = sum(r["b_calls"] if status != "vanished" else r["a_calls"] for r in sel)
            names = ", ".join(_short(r["name"], 40) for r in sel[:2]) + (
                f" and {len(sel) - 2} more" if len(sel) > 2 else ""
            )
            parts.append(f"{side}: {names} ({_count(calls)} calls, {fmt_ns(ns)})")
        n = len(rows)
        what = _short(first["name"], 50) if n == 1 else f"{n} kernels"
        statuses = {r["status"] for r in rows}
        kind = (
            "swapped"
            if {"new", "vanished"} <= statuses
            else ("new" if "new" in statuses else first["status"])
        )
        clues.append(
            Clue(
                "danger_" + kind,
                f"{what} with a determinism risk ({rule_id}, {first['level']})",
                "; ".join(parts),
                f"can explain numerically different results: {_brief(first['why'])} "
                f"Fix: {first['fix']}",
                "strong" if first["level"] == "high" else "moderate",
                "danger",
            )
        )
    return sorted(clues, key=lambda c: _CLUE_ORDER.get(c.id, 9))


def _brief(text: str, width: int = 140) -> str:
    """The first sentence of a rule's explanation, cut at a word if long (full text in the
    danger table)."""
    sentence = text.split(". ")[0].rstrip(".")
    if len(sentence) > width:
        return sentence[:width].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return sentence + "."


# Evidence-board order: caveats first, then what explains the most.
_CLUE_ORDER = {
    "not_comparable": 0,
    "graph_replays_hidden": 1,
    "weak_evidence": 1,
    "uniform_change": 2,
    "per_call_outlier": 2,
    "same_count_different_path": 3,
    "launch_sequence_diverges": 3,
    "variant_swap": 4,
    "danger_new": 5,
    "danger_vanished": 5,
    "danger_grew": 5,
    "danger_swapped": 5.5,
    "new_kernels": 6,
    "vanished_kernels": 6,
    "copy_growth": 7,
    "copy_shrink": 7,
    "memset_growth": 8,
    "memset_shrink": 8,
}


def _short(name: str | None, width: int = 60, *, templates: bool = False) -> str:
    """A kernel name short enough for a sentence (or, with ``templates``, a table cell)."""
    if not name:
        return "?"
    from .kernelnames import normalize, qualified_name

    text = normalize(name) if templates else qualified_name(name)
    return text if len(text) <= width else text[: width - 1] + "…"


# -- gates -----------------------------------------------------------------------------------
_GATE = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s*(<=|>=|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$")
_OPS = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


@dataclass(frozen=True)
class GateResult:
    expression: str
    figure: str
    value: float
    tripped: bool


def check_gates(d: TraceDiff, expressions: list[str]) -> list[GateResult]:
    """Evaluate ``--fail-if`` expressions: ``FIGURE OP NUMBER`` (OP one of < <= > >= == !=).

    ``FIGURE`` is a key of ``TraceDiff.figures``; a gate trips when the comparison is true.
    """
    results = []
    for expr in expressions:
        m = _GATE.match(expr)
        if not m:
            raise UsageError(
                f"--fail-if {expr!r} is not FIGURE OP NUMBER (e.g. gpu_time_ratio>1.05); "
                "OP is one of < <= > >= == !="
            )
        fig, op, num = m.groups()
        if fig not in d.figures:
            raise UsageError(
                f"--fail-if: unknown figure {fig!r}; known: {', '.join(sorted(d.figures))}"
            )
        value = d.figures[fig]
        results.append(GateResult(expr.strip(), fig, value, bool(_OPS[op](value, float(num)))))
    return results
