"""``--fail-if`` gates: ``FIGURE OP NUMBER`` over named figures: a TraceDiff's (diff), or
one trace's util and steps figures (``tracelens util``/``steps --fail-if``)."""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:
    from .collect import Side
    from .model import TraceDiff

_GATE = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s*(<=|>=|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$")
_OPS = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


@dataclass(frozen=True)
class GateResult:
    expression: str
    figure: str
    value: float
    tripped: bool


def check_gates(d: TraceDiff | Mapping[str, float], expressions: list[str]) -> list[GateResult]:
    """Evaluate ``--fail-if`` expressions: ``FIGURE OP NUMBER`` (OP one of < <= > >= == !=).

    ``FIGURE`` is a key of ``d.figures`` (or of ``d``, a mapping of figures); a gate trips
    when the comparison is true.
    """
    figures = d if isinstance(d, Mapping) else d.figures
    results = []
    for expr in expressions:
        m = _GATE.match(expr)
        if not m:
            raise UsageError(
                f"{{param}} {expr!r} is not FIGURE OP NUMBER (e.g. gpu_time_ratio>1.05); "
                "OP is one of < <= > >= == !=",
                param="gate",
            )
        fig, op, num = m.groups()
        if fig not in figures:
            known = f"known: {', '.join(sorted(figures))}" if figures else "this result has none"
            raise UsageError(f"{{param}}: unknown figure {fig!r}; {known}", param="gate")
        value = figures[fig]
        results.append(GateResult(expr.strip(), fig, value, bool(_OPS[op](value, float(num)))))
    return results


def side_figures(a: Side, b: Side) -> dict[str, float]:
    """A diff's util and steps figures (``Util.figures``, ``Steps.figures`` of what each
    side already read): B's (the run under test) by their own names, A's (the baseline)
    with ``_a`` after them: ``util<0.8``, ``util_a``. None of them when the time accounting
    was left out."""

    def own(side: Side) -> dict[str, float]:
        util = side.util.figures() if side.util is not None else {}
        return util | (side.steps.figures() if side.steps is not None else {})

    return own(b) | {f"{k}_a": v for k, v in own(a).items()}
