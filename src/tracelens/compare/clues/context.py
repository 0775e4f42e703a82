"""What every clue function reads (:class:`Context`: both sides, the diff's tables, the
typical change, steps) and the few words they share (counts, kernel names, "far from 1")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from ..collect import Side
    from ..model import Comparability, DeviceChange, SequenceAlignment, TypicalChange


@dataclass
class Context:
    """What the clue functions read."""

    sa: Side
    sb: Side
    copies: pl.DataFrame
    kernels: pl.DataFrame
    swaps: pl.DataFrame
    alignment: tuple[SequenceAlignment, ...]
    danger: pl.DataFrame
    typical: TypicalChange
    score: Comparability
    comparable: bool
    steps: int | None  # steps in B when both captures repeat a step: impacts per step
    steps_a: int | None = None
    # The typical change of each device pair (two pairs or more; else empty)
    devices: tuple[DeviceChange, ...] = ()
    # How many devices run each side's work, where the runs differ in it (model.replicas;
    # else (1, 1)): per-step counts of all devices' launches are per step and device
    replicas: tuple[int, int] = (1, 1)

    @property
    def overall(self) -> float:
        return self.typical.ratio

    def per_unit(self, ns: float) -> float:
        """A time in B's terms, per step when steps are known (and per device where the
        runs spread their steps over different numbers of devices: ``replicas``)."""
        return ns / (self.steps * self.replicas[1]) if self.steps else ns

    @property
    def time_a(self) -> int:
        return self.sa.totals["kernel_time_ns"] or 0

    @property
    def time_b(self) -> int:
        return self.sb.totals["kernel_time_ns"] or 0

    @property
    def launches_a(self) -> int:
        return self.sa.totals["kernel_launches"] or 0

    @property
    def launches_b(self) -> int:
        return self.sb.totals["kernel_launches"] or 0


def count(n: int) -> str:
    return f"{n:,}"


def short_name(name: str | None, width: int = 60, *, templates: bool = False) -> str:
    """A kernel name short enough for a sentence (or, with ``templates``, a table cell)."""
    if not name:
        return "?"
    from ...kernelnames import normalize, qualified_name

    text = normalize(name) if templates else qualified_name(name)
    return text if len(text) <= width else text[: width - 1] + "…"


def name_pair(a: str | None, b: str | None, width: int = 60) -> tuple[str, str]:
    """Two kernel names for one sentence (:func:`short_name`), told apart: when both
    shorten to the same text (a kernel renamed by a library upgrade: the same long prefix),
    each from the scope where they differ (or a little before the first character that
    does), '…' marking what is left out."""
    sa, sb = short_name(a, width), short_name(b, width)
    if sa != sb or not a or not b or a == b:
        return sa, sb
    from ...kernelnames import qualified_name

    ta, tb = qualified_name(a), qualified_name(b)
    if ta == tb:  # they differ in what the qualified name leaves out
        ta, tb = a, b
    pairs = zip(ta, tb, strict=False)
    at = next((i for i, (x, y) in enumerate(pairs) if x != y), min(len(ta), len(tb)))
    # from the scope the names differ in (after the last '::' before it), when it is short
    scope = ta.rfind("::", 0, at) + 2
    start = scope if 2 <= scope and at - scope < width - 8 else max(0, at - width // 3)

    def cut(text: str) -> str:
        part = text[start:]
        part = part if len(part) < width else part[: width - 2] + "…"
        return "…" + part if start else part

    return cut(ta), cut(tb)


def outside(r: float | None, limit: float) -> bool:
    """``r`` at least ``limit``× away from 1, either way."""
    return r is not None and (r >= limit or r <= 1 / limit)
