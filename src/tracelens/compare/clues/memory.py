"""Clues about copies by kind and memsets whose count or bytes moved."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...units import fmt_bytes, fmt_pct_change, fmt_ratio
from ..model import Clue, ratio
from .context import Context, count, outside
from .spec import make, prose, threshold

if TYPE_CHECKING:
    from ..collect import Side


def copy_changes(x: Context) -> list[Clue]:
    """Copies by kind whose count or bytes moved (small absolute amounts are noise)."""
    limit = threshold("copy_ratio")
    clues = []
    for r in x.copies.iter_rows(named=True):
        cr, br = ratio(r["a_count"], r["b_count"]), ratio(r["a_bytes"], r["b_bytes"])
        many = max(r["a_count"], r["b_count"]) >= threshold("copy_min_count")
        big = max(r["a_bytes"], r["b_bytes"]) >= threshold("copy_min_bytes")
        count_moved = many and outside(cr, limit)
        bytes_moved = big and outside(br, limit)
        if not (count_moved or bytes_moved):
            continue
        grew = (cr or 1) >= limit or (br or 1) >= limit
        change = (
            f"{fmt_pct_change(cr)} {r['operation']}"
            if count_moved
            else f"{r['operation']}: {fmt_ratio(br)} the bytes"
        )
        d2d_grew = r["copy_kind"] == 8 and grew
        clues.append(
            make(
                "copy_growth" if grew else "copy_shrink",
                f"{count(r['a_count'])} → {count(r['b_count'])} copies, "
                f"{fmt_bytes(r['a_bytes'])} → {fmt_bytes(r['b_bytes'])}",
                impact_ns=x.per_unit(_copy_ns(x.sb, r) - _copy_ns(x.sa, r)),
                rows=(r["operation"],),
                change=change,
                verdict=prose("copy_growth", "verdict_d2d") if d2d_grew else None,
            )
        )
    return clues


def _copy_ns(side: Side, row: dict[str, Any]) -> int:
    return side.copies.get(row["copy_kind"], {}).get("total_ns", 0) or 0


def memset_changes(x: Context) -> list[Clue]:
    ma, mb = x.sa.totals["memset_count"] or 0, x.sb.totals["memset_count"] or 0
    mr = ratio(ma, mb)
    if max(ma, mb) < threshold("copy_min_count") or not outside(mr, threshold("copy_ratio")):
        return []
    return [
        make(
            "memset_growth" if mr > 1 else "memset_shrink",
            f"{count(ma)} → {count(mb)} memsets, "
            f"{fmt_bytes(x.sa.totals['memset_bytes'])} → {fmt_bytes(x.sb.totals['memset_bytes'])}",
            rows=("memset count", "memset bytes"),
            change=fmt_pct_change(mr),
        )
    ]
