"""The totals and the copies-by-kind tables (A, B, delta, B / A), and :func:`ratio`, the
B / A every section uses."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from ..collect import Side


def ratio(a: float | None, b: float | None) -> float | None:
    """B / A; None when both are zero (or missing), inf for growth from zero."""
    if a is None or b is None:
        return None
    if a == 0:
        return None if b == 0 else math.inf
    return b / a


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
