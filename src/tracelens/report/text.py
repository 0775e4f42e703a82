"""How the report writes numbers and kernel names: the template filters and what collect.py
and layout.py put in tooltips and labels."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..units import fmt_signed_ns

# Names compared with each other to label them apart (a table shows fewer).
MAX_LABEL_GROUP = 64
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
    """A duration change for the page: its sign, the minus typographic (U+2212)."""
    return fmt_signed_ns(ns, minus="−")


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


def labels(names: list[str], width: int = 80) -> dict[str, str]:
    """A label per kernel name, at most ``width`` characters, that tells apart names whose
    clipped forms would look the same (long templated names that differ only deep in their
    template arguments): those show the start of the name, ``…``, and the text from where
    they differ. Other names get :func:`short`."""
    from ..kernelnames import normalize

    clipped = {n: short(n, width) for n in names}
    groups: dict[str, list[str]] = {}
    for n in dict.fromkeys(names):
        groups.setdefault(clipped[n], []).append(n)
    out = dict(clipped)
    for group in groups.values():
        if len(group) < 2:
            continue
        texts = {n: normalize(n) for n in group[:MAX_LABEL_GROUP]}
        for n, text in texts.items():
            # Where it parts from the name most like it.
            at = max(_common_prefix(text, other) for m, other in texts.items() if m != n)
            out[n] = _around(text, at, width)
    return out


def _common_prefix(a: str, b: str) -> int:
    i = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        i += 1
    return i


def _around(text: str, at: int, width: int) -> str:
    """``text`` clipped to ``width`` so that position ``at`` shows: its head (the name up to
    its template arguments), ``…``, then the arguments around ``at``."""
    cut = text.find("<")
    head = text[: cut + 1] if 0 < cut < width // 2 else text[: width // 3]
    room = width - len(head) - 1
    arg = max(text.rfind(", ", 0, at) + 2, text.rfind("<", 0, at) + 1)  # where ``at``'s arg starts
    if arg <= len(head):
        return text if len(text) <= width else text[: width - 1] + "…"
    # Start up to half the room before that argument, at an argument boundary.
    start = arg
    while start > len(head):
        prev = max(
            text.rfind(", ", len(head), start - 2) + 2, text.rfind("<", len(head), start - 1) + 1
        )
        if prev <= len(head) or arg - prev > room // 2:
            break
        start = prev
    tail = text[start:]
    tail = tail if len(tail) <= room else tail[: room - 1] + "…"
    return f"{head}…{tail}"
