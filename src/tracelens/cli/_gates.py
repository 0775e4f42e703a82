"""``--fail-if``: the gates over a command's figures, checked before any output and
reported (exit 1) after it."""

from __future__ import annotations

import sys
from typing import Any

import typer


def check_gates(figures: Any, expressions: list[str] | None):
    """The ``--fail-if`` gates over ``figures`` (a mapping, or a TraceDiff), evaluated now
    so that a bad expression fails before any output; see :func:`fail_if_tripped`."""
    from ..compare.gates import check_gates as evaluate

    return evaluate(figures, expressions or [])


def fail_if_tripped(gates) -> None:
    """After the output: one stderr line per tripped gate, and exit 1 when there is one."""
    tripped = [g for g in gates if g.tripped]
    for g in tripped:
        print(
            f"tracelens: gate tripped: {g.expression} ({g.figure} = {gate_value(g.value)})",
            file=sys.stderr,
        )
    if tripped:
        raise typer.Exit(1)


def gate_value(value: float) -> str:
    """A gate's figure as its line shows it: an integral value exactly, as an integer (a
    count of 12345 kernels is 12345 in a CI log, not 4 digits' 1.234e+04), any other to 4
    significant digits (0.1235)."""
    # an int as it is: exact beyond a float's 53 bits (and a bool as 0 or 1)
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return f"{value:.4g}"
