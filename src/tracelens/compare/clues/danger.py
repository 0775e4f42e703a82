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
    category (:func:`.kernels.variant_swaps`); a kernel that grew and that a per-call or
    calls-per-step line names (what changed about that one kernel) counts there, and the
    evidence says so (no impact when that is every kernel of the rule)."""
    import polars as pl

    risky = risky_rows(x)
    work = work_ratio((x.steps_a, x.steps), (x.launches_a, x.launches_b))
    clues = []
    # the kernels a per-call or calls-per-step line names: their time is that line's
    counted: set[str] = _named_by_kernel_clues(x) if "grew" in risky["status"] else set()
    elsewhere = set(counted)
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
        mine = [r for r in rows if r["name"] not in counted]
        impact = sum(r["b_total_ns"] - r["a_total_ns"] * work for r in mine) if mine else None
        counted.update(r["name"] for r in rows)
        if named := [r for r in rows if r["name"] in elsewhere]:
            parts.append(_named_words(named))
        clues.append(
            make(
                "danger_" + kind,
                "; ".join(parts),
                strength="strong" if first["level"] == "high" else None,
                impact_ns=None if impact is None else x.per_unit(impact),
                rows=[r["name"] for r in rows],
                what=short_name(first["name"], 50) if n == 1 else f"{n} kernels",
                rule_id=rule_id,
                level=first["level"],
                why=_brief(first["why"]),
                fix=first["fix"],
            )
        )
    return clues


def _named_by_kernel_clues(x: Context) -> set[str]:
    """The danger table's names (demangled) of the kernels a per-call or calls-per-step
    clue names (by the name the diff shows: a short name stands for its demangled one,
    ``Side.demangled_of``)."""
    from .kernels import calls_per_step, per_call_outliers

    of = {**x.sa.demangled_of, **x.sb.demangled_of}
    names = {name for c in per_call_outliers(x) + calls_per_step(x) for name in c.rows}
    return {of.get(name, name) for name in names}


def _named_words(rows: list[dict]) -> str:
    """What the evidence says of the kernels whose time a per-call line counts."""
    from .spec import prose

    names = ", ".join(short_name(r["name"], 40) for r in rows[:2])
    more = f" and {len(rows) - 2} more" if len(rows) > 2 else ""
    return prose("danger_grew", "named_elsewhere", names=names + more)
