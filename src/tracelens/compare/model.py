"""What ``tracelens diff`` computes: the ``TraceDiff`` dataclass and one builder per
section (totals, copies, kernels, categories, variants, danger, figures). The alignment is
in ``align.py``, the evidence board in ``clues.py``; nothing here prints."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..results import Result

if TYPE_CHECKING:
    import polars as pl

    from .collect import Side


@dataclass(frozen=True)
class Clue:
    """One row of the evidence board."""

    id: str  # rule that produced it: per_call_outlier, variant_swap, copy_growth, ...
    clue: str  # what was seen, in a few words
    evidence: str  # the numbers, from both traces
    verdict: str  # what it suggests
    strength: str  # strong | moderate | weak
    anchor: str  # id of the table that supports it (report links), e.g. "kernels"
    # GPU time the clue accounts for, ns (B's terms; per step when steps_b is set on the
    # TraceDiff, total otherwise); None for clues that explain results, not time
    impact_ns: float | None = None
    # The rows of the ``anchor`` table that back it, by their key there: kernel names
    # (kernels, danger), categories (variants), copy kinds' operation (copies), devices
    # (alignment), metrics (totals); empty: the table as a whole
    rows: tuple[str, ...] = ()


@dataclass(frozen=True)
class SequenceAlignment:
    """How the in-order launch sequences of one device compare."""

    device: int
    launches_a: int
    launches_b: int
    aligned: int  # launches compared
    matched_in_order: int  # launches that match, in order (longest matching blocks)
    first_divergence: int | None  # 0-based index of the first differing launch (None: same);
    # shown 1-based ("launch #4") everywhere people read it
    a_at_divergence: str | None
    b_at_divergence: str | None
    replaced: tuple[tuple[str, str, int], ...]  # (name in A, name in B, launches) most common
    only_in_a: tuple[tuple[str, int], ...]  # launches A makes where B makes none
    only_in_b: tuple[tuple[str, int], ...]
    truncated: bool  # True when some launches were compared by counts, not in order
    # How the sequences relate: identical | prefix | suffix | subsequence | slice (one is
    # the other with launches left out at an end or one place: a capture difference) |
    # capture (both repeat the same step, different numbers of them) | periodic (both
    # repeat a step, and the steps differ) | aligned (exact alignment) | windows (long and
    # aperiodic: aligned in windows, see compare/align.py for the bound)
    relation: str = "aligned"
    steps_a: int | None = None  # whole steps (repetitions of the launch motif), if periodic
    steps_b: int | None = None
    step_launches_a: int | None = None  # launches per step
    step_launches_b: int | None = None
    # How one step of B differs from one step of A: (launch # in the step, 1-based, name in
    # A or None, name in B or None), at most 10
    step_changes: tuple[tuple[int, str | None, str | None], ...] = ()
    # Kernels launched a different number of times per step: (name, per step in A, in B)
    step_calls: tuple[tuple[str, int, int], ...] = ()
    # B's device when it is not ``device``: each run launched on one device only, a
    # different one (two ranks of one job), and those two sequences are the ones compared
    device_b: int | None = None

    @property
    def where(self) -> str:
        """The device(s) compared, as the board says them: ``device 0``, or ``device 0 (A)
        / 5 (B)`` when the runs used different devices."""
        if self.device_b is None or self.device_b == self.device:
            return f"device {self.device}"
        return f"device {self.device} (A) / {self.device_b} (B)"

    @property
    def capture_difference(self) -> bool:
        """The two sequences are the same work, one capture holding less (or shifted)."""
        return self.relation in ("prefix", "suffix", "slice", "capture")

    @property
    def identical(self) -> bool:
        return self.first_divergence is None

    def to_dict(self) -> dict[str, Any]:
        """The fields by name; each nested tuple a list of dicts with named members
        (:data:`ALIGNMENT_PARTS`), as the JSON and :func:`alignment_frame` give them."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        for key, parts in ALIGNMENT_PARTS.items():
            out[key] = [dict(zip(parts, item, strict=True)) for item in out[key]]
        return out


# The members of SequenceAlignment's nested tuples, by name: names are text, the rest counts
# of launches (``launch``: its 1-based position in the step).
ALIGNMENT_PARTS: dict[str, tuple[str, ...]] = {
    "replaced": ("name_a", "name_b", "launches"),
    "only_in_a": ("name", "launches"),
    "only_in_b": ("name", "launches"),
    "step_changes": ("launch", "name_a", "name_b"),
    "step_calls": ("name", "per_step_a", "per_step_b"),
}
_ALIGNMENT_TEXT = frozenset(
    {"a_at_divergence", "b_at_divergence", "relation", "name", "name_a", "name_b"}
)


def alignment_frame(alignment: tuple[SequenceAlignment, ...]) -> pl.DataFrame:
    """One row per device (:class:`SequenceAlignment`'s fields as columns): positions and
    counts Int64, names String, ``truncated`` Boolean, each nested tuple a
    ``List(Struct)`` with the members of :data:`ALIGNMENT_PARTS` (explode and unnest it)."""
    import polars as pl

    def dtype(key: str) -> pl.DataType:
        if key in ALIGNMENT_PARTS:
            return pl.List(pl.Struct({p: dtype(p) for p in ALIGNMENT_PARTS[key]}))
        if key == "truncated":
            return pl.Boolean()
        return pl.String() if key in _ALIGNMENT_TEXT else pl.Int64()

    schema = {k: dtype(k) for k in SequenceAlignment.__dataclass_fields__}
    return pl.DataFrame([al.to_dict() for al in alignment], schema=schema)


def clues_frame(clues: tuple[Clue, ...]) -> pl.DataFrame:
    """One row per clue (:class:`Clue`'s fields as columns): text String, ``impact_ns``
    Float64, ``rows`` List(String); the same columns and types when there are none."""
    import polars as pl

    schema = {k: pl.String() for k in Clue.__dataclass_fields__}
    schema |= {"impact_ns": pl.Float64(), "rows": pl.List(pl.String())}
    return pl.DataFrame([asdict(c) for c in clues], schema=schema)


@dataclass(frozen=True)
class TypicalChange:
    """The typical per-call change B / A over the kernels both runs launch: a median
    weighted by launches with no kernel above ``cap`` of the weight (so one kernel never
    decides it), and the quartiles of the same distribution (its spread)."""

    ratio: float
    q25: float
    q75: float
    kernels: int  # kernels both runs launch

    @property
    def tight(self) -> bool:
        """Half the launches' kernels changed within 15% of the typical change."""
        return self.q25 >= self.ratio / 1.15 and self.q75 <= self.ratio * 1.15


@dataclass(frozen=True)
class Comparability:
    """Whether two traces are runs of the same program: a score 0..1 from named factors
    (each 0..1, weights in data/clues.toml) against a bar."""

    score: float
    bar: float
    factors: dict[str, float]
    comparable: bool
    reason: str  # the weakest factors, in words


@dataclass
class TraceDiff(Result):
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
    typical: TypicalChange | None = None
    comparability: Comparability | None = None
    # Steps per capture (the launch motif's repetitions on the busiest device), when both
    # sequences repeat a step; clue impacts are per step then
    steps_a: int | None = None
    steps_b: int | None = None
    # NVTX ranges whose launched work each side compares (--nvtx), None: no selection
    nvtx_ranges: tuple[int | None, int | None] = (None, None)
    # NVTX region deltas (compare.regions) when both runs have ranges that launched work:
    # per region (region_table) and step k against step k (steps_table); None otherwise
    nvtx_regions: pl.DataFrame | None = None
    nvtx_steps: pl.DataFrame | None = None
    # What the diff read from each trace (compare.collect.Side: totals, census, util, ...),
    # for callers that show more of the same traces (the report) without reading it again.
    # Not part of the JSON.
    sides: tuple[Side, Side] | None = field(default=None, repr=False, compare=False)

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
            "alignment": [a.to_dict() for a in self.alignment],
            "danger": self.danger.to_dicts(),
            "typical": asdict(self.typical) if self.typical else None,
            "comparability": asdict(self.comparability) if self.comparability else None,
            "steps_a": self.steps_a,
            "steps_b": self.steps_b,
            "nvtx_ranges": list(self.nvtx_ranges),
            "nvtx_regions": None if self.nvtx_regions is None else self.nvtx_regions.to_dicts(),
            "nvtx_steps": None if self.nvtx_steps is None else self.nvtx_steps.to_dicts(),
        }

    def tables(self) -> dict[str, pl.DataFrame]:
        """kernels (the main table), clues (the evidence board), alignment (launch order per
        device), totals, categories, copies, variant_swaps, danger."""
        return {
            "kernels": self.kernels,
            "clues": clues_frame(self.clues),
            "alignment": alignment_frame(self.alignment),
            "totals": self.totals,
            "categories": self.categories,
            "copies": self.copies,
            "variant_swaps": self.variant_swaps,
            "danger": self.danger,
        }

    def _summary(self) -> str:
        return f"A = {self.label_a} → B = {self.label_b}: {len(self.clues)} clues"


def ratio(a: float | None, b: float | None) -> float | None:
    """B / A; None when both are zero (or missing), inf for growth from zero."""
    if a is None or b is None:
        return None
    if a == 0:
        return None if b == 0 else math.inf
    return b / a


# -- totals -------------------------------------------------------------------------------
TOTAL_METRICS = (
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
)


def totals_table(sa: Side, sb: Side) -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame(
        {
            "metric": [label for _, label in TOTAL_METRICS],
            "a": [sa.totals[k] or 0 for k, _ in TOTAL_METRICS],
            "b": [sb.totals[k] or 0 for k, _ in TOTAL_METRICS],
        },
        schema={"metric": pl.String, "a": pl.Int64, "b": pl.Int64},
    ).with_columns(
        delta=pl.col("b") - pl.col("a"),
        ratio=pl.when(pl.col("a") != 0).then(pl.col("b") / pl.col("a")).otherwise(None),
    )


# -- copies by kind -------------------------------------------------------------------------
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


def copies_table(sa: Side, sb: Side) -> pl.DataFrame:
    import polars as pl

    kinds = sorted(set(sa.copies) | set(sb.copies))
    return pl.DataFrame(
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


# -- kernels --------------------------------------------------------------------------------
KERNEL_COLUMNS = (
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


def joined_kernels(sa: Side, sb: Side, *, demangled: bool = False) -> pl.DataFrame:
    """Both sides' census joined by name, with each kernel's category (by its demangled
    name, or for a short name its dominant demangled one), before ranking. ``demangled``:
    join the demangled census whatever name the diff shows (for the category table)."""
    import polars as pl

    from ..categories import classify_column

    cols = ["name", "instances", "total_ns", "avg_ns", "med_ns"]
    ca, cb = (sa.census_demangled, sb.census_demangled) if demangled else (sa.census, sb.census)
    ka = ca.select(cols).rename({c: f"a_{c}" for c in cols[1:]})
    kb = cb.select(cols).rename({c: f"b_{c}" for c in cols[1:]})
    kernels = ka.join(kb, on="name", how="full", coalesce=True)
    full = {} if demangled else {**sa.demangled_of, **sb.demangled_of}
    # each name by its demangled form (a short name's dominant one), all at once
    by = kernels["name"]
    if full:
        by = by.replace_strict(full, default=by, return_dtype=pl.String)
    cats = classify_column(by)
    return kernels.with_columns(
        category=cats["category"],
        subfamily=cats["subfamily"],
    ).with_columns(
        pl.col("a_instances").fill_null(0),
        pl.col("b_instances").fill_null(0),
        pl.col("a_total_ns").fill_null(0),
        pl.col("b_total_ns").fill_null(0),
    )


def _weighted_quantile(pairs: list[tuple[float, float]], q: float) -> float:
    pairs = sorted(pairs)
    total = sum(w for _, w in pairs)
    acc = 0.0
    for value, weight in pairs:
        acc += weight
        if acc >= q * total:
            return float(value)
    return float(pairs[-1][0])


def typical_change(kernels: pl.DataFrame, cap: float) -> TypicalChange:
    """The typical change per call of the kernels both runs launch. Each kernel weighs its
    launches (the smaller side's), capped at ``cap`` of the total, so neither one dominant
    kernel nor a swarm of tiny ones decides it. A kernel that changes by just this much is
    unsurprising (everything got slower or faster together); swapped kernels don't bias it."""
    import polars as pl

    both = kernels.filter(
        (pl.col("a_instances") > 0) & (pl.col("b_instances") > 0) & (pl.col("a_avg_ns") > 0)
    ).select(
        ratio=pl.col("b_avg_ns") / pl.col("a_avg_ns"),
        weight=pl.min_horizontal("a_instances", "b_instances").cast(pl.Float64),
    )
    if both.height == 0:
        return TypicalChange(1.0, 1.0, 1.0, 0)
    limit = cap * float(both["weight"].sum())
    pairs = [(r, min(w, limit)) for r, w in both.iter_rows()]
    return TypicalChange(
        _weighted_quantile(pairs, 0.5),
        _weighted_quantile(pairs, 0.25),
        _weighted_quantile(pairs, 0.75),
        both.height,
    )


def ranked_kernels(kernels: pl.DataFrame, overall: float) -> pl.DataFrame:
    """Per kernel: status (both / only_a / only_b), ratios, delta and *surprise*: how far
    its per-call change is from the typical change ``overall``, in log space, weighted by its
    share of GPU time. Kernels that appear or vanish score their share: appearing is as
    surprising as doubling. Most surprising first."""
    import polars as pl

    grand = int(kernels["a_total_ns"].sum() + kernels["b_total_ns"].sum()) or 1
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
    kernels = kernels.with_columns(
        surprise=pl.when(pl.col("status") == "both")
        .then(
            (pl.col("per_call_ratio") / overall).log().abs() * pl.col("share")
            + (pl.col("b_instances") / pl.col("a_instances")).log().abs() * pl.col("share") / 4
        )
        .otherwise(pl.col("share") * math.log(2))
    ).sort(["surprise", "name"], descending=[True, False])
    return kernels.select(KERNEL_COLUMNS)


# -- categories and variants ---------------------------------------------------------------
def categories_table(kernels: pl.DataFrame) -> pl.DataFrame:
    import polars as pl

    return (
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


def variants_table(kernels: pl.DataFrame) -> pl.DataFrame:
    """Per category: the kernels only one side runs, their count, time and calls."""
    import polars as pl

    def only(side: str, column: str) -> pl.Expr:
        return pl.when(pl.col("status") == f"only_{side}").then(pl.col(f"{side}_{column}")).sum()

    return (
        kernels.filter(pl.col("status") != "both")
        .group_by("category")
        .agg(
            (pl.col("status") == "only_a").sum().alias("only_a_kernels"),
            only("a", "total_ns").alias("only_a_ns"),
            only("a", "instances").alias("only_a_calls"),
            (pl.col("status") == "only_b").sum().alias("only_b_kernels"),
            only("b", "total_ns").alias("only_b_ns"),
            only("b", "instances").alias("only_b_calls"),
        )
        .sort(["only_b_ns", "category"], descending=[True, False])
    )


def category_overlap(kernels: pl.DataFrame) -> float:
    """Share of launches whose category both runs launch as often (min over max, summed)."""
    by_cat: dict[str, list[int]] = {}
    for cat, a, b in kernels.select("category", "a_instances", "b_instances").iter_rows():
        acc = by_cat.setdefault(cat, [0, 0])
        acc[0] += a
        acc[1] += b
    both = sum(min(a, b) for a, b in by_cat.values())
    most = max(sum(a for a, _ in by_cat.values()), sum(b for _, b in by_cat.values()))
    return both / most if most else 0.0


# -- comparability --------------------------------------------------------------------
FACTOR_WORDS = {
    "shared_launches": "launches of kernels both traces run",
    "shared_time": "kernel time in kernels both traces run",
    "category_mix": "the same mix of work (kernel time per category)",
    "sequence": "launch order in common",
    "gpus": "the same GPU models and count",
}


def comparability(
    sa: Side,
    sb: Side,
    kernels: pl.DataFrame,
    alignment: tuple[SequenceAlignment, ...],
    weights: dict[str, float],
    bar: float,
) -> Comparability:
    """Are these two runs of the same program? Each factor is 0..1; the score is their
    weighted mean. Identity of kernels weighs most; a GEMM swap lowers shared time but not
    the category mix or the launch order, another GPU lowers only ``gpus``."""
    import polars as pl

    both = kernels.filter(pl.col("status") == "both")
    launches = int(kernels["a_instances"].sum() + kernels["b_instances"].sum())
    time = int(kernels["a_total_ns"].sum() + kernels["b_total_ns"].sum())
    aligned = sum(al.aligned for al in alignment)
    gpus_a, gpus_b = sa.gpus, sb.gpus
    if gpus_a == gpus_b:
        gpus = 1.0
    elif set(gpus_a) == set(gpus_b):
        gpus = 0.5  # same models, another count
    else:
        gpus = 0.0
    factors = {
        "shared_launches": int(both["a_instances"].sum() + both["b_instances"].sum())
        / (launches or 1),
        "shared_time": int(both["a_total_ns"].sum() + both["b_total_ns"].sum()) / (time or 1),
        "category_mix": category_time_mix(kernels),
        "sequence": sum(al.matched_in_order for al in alignment) / (aligned or 1),
        "gpus": gpus,
    }
    total = sum(weights.values())
    score = sum(weights[k] * v for k, v in factors.items()) / total
    weakest = sorted((v, k) for k, v in factors.items() if v < 0.5)
    reason = "; ".join(f"{v:.0%} {FACTOR_WORDS[k]}" for v, k in weakest[:3])
    return Comparability(
        round(score, 4),
        bar,
        {k: round(v, 4) for k, v in factors.items()},
        score >= bar and bool(time),
        reason,
    )


def category_time_mix(kernels: pl.DataFrame) -> float:
    """How alike the two runs spend their kernel time across categories: the sum over
    categories of the smaller of the two time shares (1: the same mix)."""
    import polars as pl

    by_cat = kernels.group_by("category").agg(
        a=pl.col("a_total_ns").sum(), b=pl.col("b_total_ns").sum()
    )
    ta, tb = float(by_cat["a"].sum()), float(by_cat["b"].sum())
    if not ta or not tb:
        return 0.0
    return float(sum(min(a / ta, b / tb) for a, b in by_cat.select("a", "b").iter_rows()))


# -- danger-zone kernels ------------------------------------------------------------------
DANGER_SCHEMA = {
    "rule_id": "String",
    "level": "String",
    "status": "String",
    "name": "String",
    "a_calls": "Int64",
    "b_calls": "Int64",
    "a_total_ns": "Int64",
    "b_total_ns": "Int64",
    "why": "String",
    "fix": "String",
}
_LEVEL_ORDER = {"high": 0, "medium": 1, "info": 2}
_STATUS_ORDER = {"new": 0, "grew": 1, "vanished": 2, "shrank": 3, "same": 4}


def danger_table(kernels: pl.DataFrame, growth: float, typical: float = 1.0) -> pl.DataFrame:
    """Danger-zone kernels of either side: new, vanished, grew / shrank (time beyond
    ``growth``× the ``typical`` change of every kernel) or same; riskiest and newest first."""
    import polars as pl

    from ..danger import load_danger_rules

    rules = load_danger_rules()
    schema = {k: getattr(pl, v) for k, v in DANGER_SCHEMA.items()}
    hits = rules.every_frame(kernels["name"])  # each name once, vectorized
    by_rule = pl.DataFrame(
        {
            "rule": list(range(len(rules.rules))),
            "rule_id": [r.id for r in rules.rules],
            "level": [r.level for r in rules.rules],
            "why": [r.why for r in rules.rules],
            "fix": [r.fix for r in rules.rules],
        },
        schema_overrides={"rule": pl.UInt32},
    )
    a, b = pl.col("a_total_ns"), pl.col("b_total_ns")
    status = (
        pl.when(pl.col("status") == "only_b")
        .then(pl.lit("new"))
        .when(pl.col("status") == "only_a")
        .then(pl.lit("vanished"))
        .when(b > a * typical * growth)
        .then(pl.lit("grew"))
        .when(b < a * typical / growth)
        .then(pl.lit("shrank"))
        .otherwise(pl.lit("same"))
    )
    out = (
        kernels.select(
            "name",
            status.alias("status"),
            pl.col("a_instances").alias("a_calls"),
            pl.col("b_instances").alias("b_calls"),
            "a_total_ns",
            "b_total_ns",
        )
        .join(hits, on="name", how="inner", maintain_order="left")
        .join(by_rule, on="rule", how="inner", maintain_order="left")
    )
    order = pl.col("level").replace_strict(_LEVEL_ORDER, default=9, return_dtype=pl.Int64)
    out = out.sort(
        order,
        pl.col("status").replace_strict(_STATUS_ORDER, return_dtype=pl.Int64),
        -pl.col("b_total_ns"),
        "name",
        "rule",
        maintain_order=True,
    )
    return out.select([pl.col(k).cast(t) for k, t in schema.items()])


# -- figures for --fail-if ------------------------------------------------------------------
def figures(
    sa: Side,
    sb: Side,
    copies: pl.DataFrame,
    kernels: pl.DataFrame,
    danger: pl.DataFrame,
    alignment: tuple[SequenceAlignment, ...],
    overlap: float,
) -> dict[str, float]:
    """The named numbers --fail-if gates read (more are added by compare.diff)."""
    import polars as pl

    def r(a, b):
        v = ratio(a, b)
        return float("inf") if v is None and b else (1.0 if v is None else float(v))

    d2d = copies.filter(pl.col("copy_kind") == 8)
    d2d_a = int(d2d["a_count"].sum()) if d2d.height else 0
    d2d_b = int(d2d["b_count"].sum()) if d2d.height else 0
    d2d_ba = int(d2d["a_bytes"].sum()) if d2d.height else 0
    d2d_bb = int(d2d["b_bytes"].sum()) if d2d.height else 0
    both = kernels.filter(pl.col("status") == "both")
    risky = danger.filter(pl.col("level").is_in(["high", "medium"]))
    ta, tb = sa.totals, sb.totals
    return {
        "gpu_time_ratio": r(ta["kernel_time_ns"], tb["kernel_time_ns"]),
        "gpu_busy_ratio": r(ta["gpu_busy_ns"], tb["gpu_busy_ns"]),
        "launch_ratio": r(ta["kernel_launches"], tb["kernel_launches"]),
        "launches_a": float(ta["kernel_launches"]),
        "launches_b": float(tb["kernel_launches"]),
        "distinct_kernels_ratio": r(ta["distinct_kernels"], tb["distinct_kernels"]),
        "new_kernels": float((kernels["status"] == "only_b").sum()),
        "vanished_kernels": float((kernels["status"] == "only_a").sum()),
        "max_per_call_ratio": float(both["per_call_ratio"].max()) if both.height else 1.0,
        "memcpy_count_ratio": r(ta["memcpy_count"], tb["memcpy_count"]),
        "memcpy_bytes_ratio": r(ta["memcpy_bytes"], tb["memcpy_bytes"]),
        "d2d_count_ratio": r(d2d_a, d2d_b),
        "d2d_bytes_ratio": r(d2d_ba, d2d_bb),
        "memset_count_ratio": r(ta["memset_count"], tb["memset_count"]),
        "span_ratio": r(ta["span_ns"], tb["span_ns"]),
        "new_danger": float((risky["status"] == "new").sum()),
        "vanished_danger": float((risky["status"] == "vanished").sum()),
        "danger_high_b": float(
            danger.filter((pl.col("level") == "high") & (pl.col("b_calls") > 0)).height
        ),
        "diverged_devices": float(sum(1 for al in alignment if not al.identical)),
        "time_overlap": float(overlap),
    }


def steps_of(alignment: tuple[SequenceAlignment, ...]) -> tuple[int | None, int | None]:
    """Steps in A and in B: those of the device with the most launches, when both of its
    sequences repeat a step."""
    if not alignment:
        return None, None
    busiest = max(alignment, key=lambda al: al.launches_a + al.launches_b)
    if busiest.steps_a and busiest.steps_b:
        return busiest.steps_a, busiest.steps_b
    return None, None
