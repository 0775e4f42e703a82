"""How the report writes numbers and kernel names: the template filters and what collect.py
and layout.py put in tooltips and labels."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..units import fmt_ns

# A per-call or total ratio at least this far from 1 (either way) is highlighted.
RATIO_HIGHLIGHT = 1.5


@dataclass(frozen=True)
class DecodedField:
    """One field of a decoded kernel name, as the page lists it."""

    name: str
    value: str
    meaning: str = ""
    confidence: str = ""


def pct(x: float | None, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x * 100:.{digits}f}%"


def count(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def signed_ns(ns: float | None) -> str:
    if ns is None:
        return "—"
    return ("+" if ns >= 0 else "−") + fmt_ns(abs(ns))


def ratio_class(r: float | None) -> str:
    """'up' / 'down' for a ratio worth highlighting, '' otherwise."""
    if r is None:
        return ""
    if math.isinf(r) or r >= RATIO_HIGHLIGHT:
        return "up"
    if r <= 1 / RATIO_HIGHLIGHT:
        return "down"
    return ""


def share_pct(time_pct: float) -> str:
    """A share already in percent (as lineup rounds it)."""
    return f"{time_pct:.1f}%"


def short(name: str | None, width: int = 80) -> str:
    """A kernel name as tracelens normalizes it (return type and parameters dropped),
    clipped to ``width`` characters."""
    if not name:
        return "?"
    from ..kernelnames import normalize

    text = normalize(name)
    return text if len(text) <= width else text[: width - 1] + "…"


def category_of(name: str) -> str:
    from ..categories import classify

    return classify(name).category


def decode(name: str) -> tuple[str | None, list[DecodedField]]:
    """(family, fields) of a kernel name as tracelens.kernelnames decodes it; the family is
    None when it says nothing the category does not."""
    from ..kernelnames import decode

    kn = decode(name)
    family = kn.family if kn.family not in ("other", kn.category) else None
    fields = [
        DecodedField(f.name, str(f.value), f.meaning or "", f.confidence or "")
        for f in kn.fields
        if f.value not in (None, "")
    ]
    return family, fields


def danger_hits(name: str) -> list[Any]:
    from ..danger import match_danger

    return list(match_danger(name))
