"""The danger-zone section of one trace (:func:`tracelens.danger.danger_table`): its rows,
each rule explained once, and how many rows the page leaves out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .omitted import Omitted
from .text import labels

if TYPE_CHECKING:
    import polars as pl


def danger_rows(census: pl.DataFrame, top: int | None = None) -> tuple[list[dict[str, Any]], int]:
    """Danger-zone kernels of one trace (every kernel of ``census`` is matched, not only
    those shown: :func:`tracelens.danger.danger_table`): its first ``top`` rows (all when
    None), and how many rows it has in all."""
    from ..danger import danger_table

    table = danger_table(census)
    shown = table if top is None else table.head(top)
    label = labels(shown["name"].unique(maintain_order=True).to_list())
    rows = [
        {
            "level": r["level"],
            "rule_id": r["rule_id"],
            "name": r["name"],
            "short": label[r["name"]],
            "calls": r["instances"],
            "total_ns": r["total_ns"],
            "why": r["why"],
            "fix": r["fix"],
        }
        for r in shown.iter_rows(named=True)
    ]
    return rows, table.height


def danger_left_out(shown: int, total: int, label: str, omitted: list[Omitted]) -> None:
    """Say how many danger-zone rows the page leaves out (``tracelens danger`` lists all)."""
    if total > shown:
        omitted.append(
            Omitted(
                f"{label}: danger zone",
                f"{total - shown:,} more danger-zone rows (riskiest and largest are listed) "
                "are not shown; raise --top, or run `tracelens danger` for every row",
            )
        )


def danger_rule_notes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each rule of danger-zone ``rows`` once (rule_id, level, why, fix), in row order: the
    page explains a rule once and its rows refer to it."""
    notes: dict[str, dict[str, Any]] = {}
    for r in rows:
        notes.setdefault(r["rule_id"], {k: r[k] for k in ("rule_id", "level", "why", "fix")})
    return list(notes.values())
