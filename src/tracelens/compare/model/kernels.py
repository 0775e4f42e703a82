"""The kernel sections: both sides' census joined by name with each kernel's category, the
typical per-call change, kernels ranked by surprise, the category table and the variants
(kernels of a category only one side runs)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .result import TypicalChange

if TYPE_CHECKING:
    import polars as pl

    from ..collect import Side


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

    from ...categories import classify_column

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


def typical_change(kernels: pl.DataFrame, cap: float, per_call: str = "avg") -> TypicalChange:
    """The typical change per call of the kernels both runs launch. Each kernel weighs its
    launches (the smaller side's), capped at ``cap`` of the total, so neither one dominant
    kernel nor a swarm of tiny ones decides it. A kernel that changes by just this much is
    unsurprising (everything got slower or faster together); swapped kernels don't bias it.
    ``per_call``: each kernel's mean call (``avg``) or its median call (``med``: what a
    few long calls, a warm-up, do not move)."""
    import polars as pl

    a, b = f"a_{per_call}_ns", f"b_{per_call}_ns"
    both = kernels.filter(
        (pl.col("a_instances") > 0) & (pl.col("b_instances") > 0) & (pl.col(a) > 0)
    ).select(
        ratio=pl.col(b) / pl.col(a),
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
