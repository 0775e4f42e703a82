"""Numbers for people: one duration, byte and ratio formatter for every text output.

fmt_ns(1_204_000) -> '1.20 ms'     fmt_bytes(81_000_000) -> '81.0 MB'
fmt_ratio(1.5)    -> '1.50×'       fmt_ratio(inf) -> 'new'
"""

from __future__ import annotations

import math


def fmt_ns(ns: float | None) -> str:
    """A duration for people: 1.20 ms, 88.0 ms, 3.41 s (three significant figures)."""
    if ns is None:
        return "—"
    for unit, factor in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= factor:
            v = ns / factor
            return f"{v:,.2f} {unit}" if abs(v) < 100 else f"{v:,.1f} {unit}"
    return f"{ns:,.0f} ns"


def fmt_signed_ns(ns: float | None, minus: str = "-") -> str:
    """A duration change with its sign: +114.1 ms, -3.20 µs (``minus``: the sign of a
    negative change; the HTML report uses the typographic minus, U+2212)."""
    if ns is None:
        return "—"
    return ("+" if ns >= 0 else minus) + fmt_ns(abs(ns))


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "—"
    for unit, factor in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= factor:
            return f"{n / factor:,.1f} {unit}"
    return f"{n:,.0f} B"


def fmt_ratio(r: float | None) -> str:
    """B / A as ``1.50×``; growth from zero is ``new``."""
    if r is None:
        return "—"
    if math.isinf(r):
        return "new"
    return f"{r:.2f}×"


def fmt_pct_change(r: float | None) -> str:
    """A ratio as a change: 1.83 -> ``+83%``."""
    if r is None or math.isinf(r):
        return "new"
    return f"{(r - 1) * 100:+.0f}%"
