"""The danger-zone section: kernels of either side that a rule of ``data/danger.toml``
matches, and whether each is new, vanished, grew, shrank or stayed the same."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl


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

    from ...danger import load_danger_rules

    rules = load_danger_rules()
    schema = {k: getattr(pl, v) for k, v in DANGER_SCHEMA.items()}
    hits = rules.every_frame(kernels["name"])  # each name once, vectorized
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
        .join(rules.frame(), on="rule", how="inner", maintain_order="left")
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
