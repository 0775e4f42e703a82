"""Danger-zone clues: kernels whose results may change between runs (``data/danger.toml``)
that appear, vanish, are swapped or grow, one clue per rule."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...units import fmt_ns
from ..model import Clue, work_ratio
from .context import Context, count, short_name
from .spec import make

if TYPE_CHECKING:
    import polars as pl


def _brief(text: str, width: int = 140) -> str:
    """The first sentence of a rule's explanation, cut at a word if long (full text in the
    danger table)."""
    sentence = text.split(". ")[0].rstrip(".")
    if len(sentence) > width:
        return sentence[:width].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return sentence + "."


def risky_rows(x: Context) -> pl.DataFrame:
    """The danger table's rows the danger clues name: new, vanished or grew, above the
    info level (riskiest first, as the table)."""
    import polars as pl

    return x.danger.filter(
        pl.col("status").is_in(["new", "vanished", "grew"]) & (pl.col("level") != "info")
    )


def danger_changes(x: Context) -> list[Clue]:
    """Danger-zone kernels: one clue per rule, kernels that appear/vanish/grow together.
    A kernel two rules match is named by both; its time counts in the first (riskiest)
    rule's impact only, so no kernel's time counts twice on the board. The kernels only
    one run launches count here, not in the "kernels appear/vanish" clue of their
    category (:func:`.kernels.variant_swaps`)."""
    import polars as pl

    risky = risky_rows(x)
    work = work_ratio((x.steps_a, x.steps), (x.launches_a, x.launches_b))
    clues = []
    counted: set[str] = set()
    for rule_id in dict.fromkeys(risky["rule_id"].to_list()):
        rows = risky.filter(pl.col("rule_id") == rule_id).to_dicts()
        first = rows[0]
        parts = []
        for status, side in (("new", "only in B"), ("vanished", "only in A"), ("grew", "grew")):
            sel = [r for r in rows if r["status"] == status]
            if not sel:
                continue
            side_of = "a" if status == "vanished" else "b"
            ns = sum(r[f"{side_of}_total_ns"] for r in sel)
            calls = sum(r[f"{side_of}_calls"] for r in sel)
            names = ", ".join(short_name(r["name"], 40) for r in sel[:2]) + (
                f" and {len(sel) - 2} more" if len(sel) > 2 else ""
            )
            parts.append(f"{side}: {names} ({count(calls)} calls, {fmt_ns(ns)})")
        n = len(rows)
        statuses = {r["status"] for r in rows}
        kind = (
            "swapped"
            if {"new", "vanished"} <= statuses
            else ("new" if "new" in statuses else first["status"])
        )
        # A's time as B's capture would hold it (B's steps or launches), as the table
        impact = sum(
            r["b_total_ns"] - r["a_total_ns"] * work for r in rows if r["name"] not in counted
        )
        counted.update(r["name"] for r in rows)
        clues.append(
            make(
                "danger_" + kind,
                "; ".join(parts),
                strength="strong" if first["level"] == "high" else None,
                impact_ns=x.per_unit(impact),
                rows=[r["name"] for r in rows],
                what=short_name(first["name"], 50) if n == 1 else f"{n} kernels",
                rule_id=rule_id,
                level=first["level"],
                why=_brief(first["why"]),
                fix=first["fix"],
            )
        )
    return clues
