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


#: The figures of :meth:`tracelens.steps.Steps.figures`.
STEP_FIGURES = (
    "steps",
    "step_median_ms",
    "step_p90_ms",
    "step_std_ms",
    "outlier_steps",
    "warmup_steps",
)
#: A diff side's level shift in step time (:attr:`tracelens.steps.Steps.level_shift`): the
#: step its time changed at (0: none) and the median of the steps from it over that of the
#: steps before it (1: none). ``step_median_ms`` is the median of all steady steps, shift
#: or not, a time few steps took when there is one: these say so to a gate.
SHIFT_FIGURES = ("level_shift", "level_shift_ratio")
#: The figures of :meth:`tracelens.util.Util.figures` that need the GPU work's kernels and
#: copies themselves, not only when the GPU was busy.
EXPOSED_FIGURES = ("exposed_communication_ms", "exposed_memory_ms")
#: The figures that are fractions (0 to 1, not percent): a gate whose number lies outside
#: 0..1 can never trip or always trips, and is refused as a usage error (``util<90``).
FRACTION_FIGURES = frozenset(
    {"util", "util_min", "time_overlap", "launch_overlap", "comparability"}
)
_GRAPH_HIDDEN = (
    "CUDA graph replays traced at graph level run communication and copies that the export "
    "does not list (profile with --cuda-graph-trace=node)"
)


class Figures(dict):
    """Named figures for gates, and those a result could not measure here (``not_measured``:
    name -> why). A gate on a figure not measured fails as such, exit 2 like a bad
    expression: it is no unknown figure, and it must not pass silently. ``|`` keeps both."""

    def __init__(
        self,
        values: Mapping[str, float] | None = None,
        not_measured: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(values or {})
        self.not_measured = {k: why for k, why in (not_measured or {}).items() if k not in self}

    def __or__(self, other: Mapping[str, float]) -> Figures:
        missing = {**self.not_measured, **getattr(other, "not_measured", {})}
        return Figures({**self, **other}, {k: v for k, v in missing.items() if k not in other})

    def __ior__(self, other: Mapping[str, float]) -> Figures:  # type: ignore[override]
        return self | other

    def suffixed(self, suffix: str) -> Figures:
        """The same figures with ``suffix`` after each name (a diff's A side: ``_a``)."""
        return Figures(
            {f"{k}{suffix}": v for k, v in self.items()},
            {f"{k}{suffix}": why for k, why in self.not_measured.items()},
        )

    def without_graph_hidden(self, replays: int) -> Figures:
        """These figures of work with ``replays`` CUDA graph replays traced at graph level:
        the exposed communication and memory not measured (the replays count as compute,
        and what communication and copies they run is in no table)."""
        if not replays:
            return self
        kept = {k: v for k, v in self.items() if k not in EXPOSED_FIGURES}
        hidden = dict.fromkeys((k for k in EXPOSED_FIGURES if k in self), _GRAPH_HIDDEN)
        return Figures(kept, {**self.not_measured, **hidden})


@dataclass(frozen=True)
class GateResult:
    expression: str
    figure: str
    value: float
    tripped: bool


def check_gates(d: TraceDiff | Mapping[str, float], expressions: list[str]) -> list[GateResult]:
    """Evaluate ``--fail-if`` expressions: ``FIGURE OP NUMBER`` (OP one of < <= > >= == !=).

    ``FIGURE`` is a key of ``d.figures`` (or of ``d``, a mapping of figures); a gate trips
    when the comparison is true. A figure the result could not measure
    (:attr:`Figures.not_measured`) is a usage error that says so.
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
        if fig in (missing := getattr(figures, "not_measured", {})):
            raise UsageError(f"{{param}}: {fig} was not measured: {missing[fig]}", param="gate")
        if fig not in figures:
            known = f"known: {', '.join(sorted(figures))}" if figures else "this result has none"
            raise UsageError(f"{{param}}: unknown figure {fig!r}; {known}", param="gate")
        _check_fraction(expr, fig, op, float(num))
        value = figures[fig]
        results.append(GateResult(expr.strip(), fig, value, bool(_OPS[op](value, float(num)))))
    return results


def _check_fraction(expr: str, figure: str, op: str, number: float) -> None:
    """A gate on a fraction figure (:data:`FRACTION_FIGURES`, a diff's A side too:
    ``util_a``) whose number lies outside 0..1 is a usage error: ``util<90`` read as
    percent would trip whatever the utilization."""
    base = figure.removesuffix("_a")
    if base in FRACTION_FIGURES and not 0.0 <= number <= 1.0:
        raise UsageError(
            f"{{param}} {expr.strip()!r}: {figure} is a fraction 0-1, not a percent "
            f"(e.g. {figure}{op}{min(max(number / 100, 0), 1):g})",
            param="gate",
        )


def side_figures(a: Side, b: Side) -> Figures:
    """A diff's util and steps figures (``Util.figures``, ``Steps.figures`` of what each
    side already read): B's (the run under test) by their own names, A's (the baseline)
    with ``_a`` after them: ``util<0.8``, ``util_a``. None of them, not measured, when the
    time accounting was left out; the exposed figures not measured where CUDA graph
    replays traced at graph level hide work."""
    from ..util import UTIL_FIGURES

    left_out = "the time accounting was left out (see the note)"

    def own(side: Side) -> Figures:
        if side.util is None:
            figures = (*UTIL_FIGURES, *STEP_FIGURES, *SHIFT_FIGURES)
            return Figures({}, dict.fromkeys(figures, left_out))
        util = side.util.figures().without_graph_hidden(side.graph[0])
        if side.steps is None:
            return util
        return util | side.steps.figures() | shift_figures(side.steps)

    return own(b) | own(a).suffixed("_a")


def per_step_figures(
    a: Side, b: Side, steps: tuple[int | None, int | None], reps: tuple[int, int] = (1, 1)
) -> Figures:
    """``gpu_time_per_step_ratio``: B's kernel time per step over A's, ``steps`` being each
    capture's steps as the clues count them (two captures of one program that hold
    different numbers of steps compare per step, where ``gpu_time_ratio`` compares their
    totals), and per device where the runs spread the steps over different numbers of
    devices (``reps``: :func:`.model.replicas`); not measured when either capture repeats
    no step."""
    from .model.totals import ratio

    steps_a, steps_b = steps[0] and steps[0] * reps[0], steps[1] and steps[1] * reps[1]
    if not (steps_a and steps_b):
        why = "a capture repeats no step (gpu_time_ratio compares the totals)"
        return Figures({}, {"gpu_time_per_step_ratio": why})
    per_a = a.totals["kernel_time_ns"] / steps_a
    per_b = b.totals["kernel_time_ns"] / steps_b
    value = ratio(per_a, per_b)
    return Figures({"gpu_time_per_step_ratio": 1.0 if value is None else float(value)})


def shift_figures(steps) -> Figures:
    """:data:`SHIFT_FIGURES` of ``steps`` (:class:`tracelens.steps.Steps`); not measured
    without steps, as the other steps figures."""
    if not steps.count:
        return Figures({}, dict.fromkeys(SHIFT_FIGURES, "no steps found"))
    shift = steps.level_shift
    if shift is None:
        return Figures({"level_shift": 0.0, "level_shift_ratio": 1.0})
    ratio = shift.after_median_ns / shift.before_median_ns if shift.before_median_ns else 0.0
    return Figures({"level_shift": float(shift.step), "level_shift_ratio": ratio})
