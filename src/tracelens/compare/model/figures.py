"""The named numbers ``--fail-if`` gates read, and the steps each capture repeats."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .totals import ratio

if TYPE_CHECKING:
    import polars as pl

    from ..collect import Side
    from .result import SequenceAlignment


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


# A device runs the same work as the busiest one when at least this share of the busiest
# device's launches are of kernels it launches as often (ranks of a data-parallel job
# launch alike; pipeline stages, or a device that takes a copy or a few kernels, do not)
REPLICA_SHARE = 0.5


def replicas(sa: Side, sb: Side) -> tuple[int, int]:
    """How many devices run each capture's work, when the captures differ in it: (1, 2) for
    the same program on one device in A and two in B (a data-parallel job on more ranks);
    (1, 1) when both run it on as many devices, whose per-step figures already compare
    alike. A device runs the work when it launches the busiest device's kernels as often,
    for :data:`REPLICA_SHARE` of the busiest device's launches (by kernel, the smaller
    count); devices that split the work (pipeline stages) count once. Runs that launch on
    as many devices are (1, 1) without a look (a grouping of every launch per side saved)."""
    from ..align import common_launches

    def count(side: Side) -> int:
        if len(side.sequences) < 2:
            return 1
        busiest = max(side.sequences, key=lambda d: (len(side.sequences[d]), -d))
        top = len(side.sequences[busiest])
        common = common_launches(side.sequences, {busiest: side.sequences[busiest]})
        return max(1, sum(1 for n in common.values() if top and n >= REPLICA_SHARE * top))

    if len(sa.sequences) == len(sb.sequences):  # as many devices: compared alike as before
        return 1, 1
    a, b = count(sa), count(sb)
    return (1, 1) if a == b else (a, b)


def steps_of(alignment: tuple[SequenceAlignment, ...]) -> tuple[int | None, int | None]:
    """Steps in A and in B: those of the device with the most launches, when both of its
    sequences repeat a step."""
    if not alignment:
        return None, None
    busiest = max(alignment, key=lambda al: al.launches_a + al.launches_b)
    if busiest.steps_a and busiest.steps_b:
        return busiest.steps_a, busiest.steps_b
    return None, None
