"""The danger-zone section: kernels of either side that a rule of ``data/danger.toml``
matches, and whether each is new, vanished, grew, shrank or stayed the same (per step, or
per launch where the captures have no steps: a longer capture is no growth)."""

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
    # per step of each side, when both captures have steps (what a change is judged on);
    # null otherwise
    "a_calls_per_step": "Float64",
    "b_calls_per_step": "Float64",
    "a_per_step_ns": "Float64",
    "b_per_step_ns": "Float64",
}


_LEVEL_ORDER = {"high": 0, "medium": 1, "info": 2}


_STATUS_ORDER = {"new": 0, "grew": 1, "vanished": 2, "shrank": 3, "same": 4}


def work_ratio(steps: tuple[int | None, int | None], launches: tuple[int, int]) -> float:
    """How much more work B's capture holds than A's: B's steps over A's when both have
    steps (``steps``: the clues' per-step counts), else B's kernel launches over A's; 1.0
    when A has neither. A capture that holds more steps runs every kernel longer in total,
    so the danger table compares totals against this, as the calls clue does."""
    (steps_a, steps_b), (launches_a, launches_b) = steps, launches
    if steps_a and steps_b:
        return steps_b / steps_a
    if launches_a and launches_b:
        return launches_b / launches_a
    return 1.0


def danger_table(
    kernels: pl.DataFrame,
    growth: float,
    typical: float = 1.0,
    work: float = 1.0,
    steps: tuple[int | None, int | None] = (None, None),
) -> pl.DataFrame:
    """Danger-zone kernels of either side: new, vanished, grew / shrank (total time beyond
    ``growth``× what A's total becomes with the ``typical`` per-call change of every kernel
    and B's ``work``: :func:`work_ratio`) or same; riskiest and newest first. With
    ``steps`` (A's, B's) both set, each side's calls and time per step too."""
    import polars as pl

    from ...danger import load_danger_rules

    rules = load_danger_rules()
    schema = {k: getattr(pl, v) for k, v in DANGER_SCHEMA.items()}
    hits = rules.every_frame(kernels["name"])  # each name once, vectorized
    # A's total as B's capture would hold it: each call changed as typical, B's steps
    a, b = pl.col("a_total_ns") * work, pl.col("b_total_ns")
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
            *_per_step(steps),
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


def _per_step(steps: tuple[int | None, int | None]) -> list[pl.Expr]:
    """Each side's calls and total time per step of its capture (null unless both have
    steps: then a change is judged per step, and the table shows what it was judged on)."""
    import polars as pl

    out = []
    for side, n in zip("ab", steps, strict=True):
        # rounded to 6 decimals: polars divides by the reciprocal, so 112 calls in 5 steps
        # came out 22.400000000000002 in the JSON a user pastes into a PR
        per = (lambda c, n=n: (pl.col(c) / n).round(6)) if all(steps) else (lambda c: pl.lit(None))
        out += [
            per(f"{side}_instances").alias(f"{side}_calls_per_step"),
            per(f"{side}_total_ns").alias(f"{side}_per_step_ns"),
        ]
    return out
