"""``--fail-if`` gates: ``FIGURE OP NUMBER`` over the named figures of a TraceDiff."""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:
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


def check_gates(d: TraceDiff, expressions: list[str]) -> list[GateResult]:
    """Evaluate ``--fail-if`` expressions: ``FIGURE OP NUMBER`` (OP one of < <= > >= == !=).

    ``FIGURE`` is a key of ``TraceDiff.figures``; a gate trips when the comparison is true.
    """
    results = []
    for expr in expressions:
        m = _GATE.match(expr)
        if not m:
            raise UsageError(
                f"--fail-if {expr!r} is not FIGURE OP NUMBER (e.g. gpu_time_ratio>1.05); "
                "OP is one of < <= > >= == !="
            )
        fig, op, num = m.groups()
        if fig not in d.figures:
            raise UsageError(
                f"--fail-if: unknown figure {fig!r}; known: {', '.join(sorted(d.figures))}"
            )
        value = d.figures[fig]
        results.append(GateResult(expr.strip(), fig, value, bool(_OPS[op](value, float(num)))))
    return results
