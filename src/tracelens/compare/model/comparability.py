"""Are two traces runs of the same program? Named factors 0..1 (shared kernels, shared
time, category mix, launch order, GPUs), their weighted score and the weakest in words."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .result import Comparability

if TYPE_CHECKING:
    import polars as pl

    from ..collect import Side
    from .result import SequenceAlignment


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
