"""The page of two traces when either has no CUDA kernels, only copies or memsets (a
data-loading profile, or CUDA graphs traced at graph level): the diff compares kernels
(their time by category and by kernel, their launches and launch order, the numerical
path), so there is no diff to show; the page says so plainly, naming the side(s) without
kernels and what they ran, and shows each trace's own sections (line-up, utilization,
timeline, memory operations, and the kernel sections of a side that has kernels)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .kernelview import no_kernels_why

if TYPE_CHECKING:
    from ..trace import Trace

# what the page says the diff cannot compare, after naming the side(s) without kernels
CANNOT_COMPARE = (
    "The diff compares kernels (their time by category and by kernel, their launches and "
    "launch order, the numerical path), so this page has no evidence board and compares "
    "nothing; each trace's own sections follow, as its page alone shows them (line-up, "
    "utilization, timeline, memory operations)"
)


def without_kernels(trace_a: Trace, trace_b: Trace) -> list[str]:
    """One sentence for each side that has GPU memory work but no kernel ('B (load.sqlite)
    has no CUDA kernels: CUDA was traced and only 3 memory copies ran'); empty when both have
    kernels, or either has no CUDA work at all (the diff then fails as it does)."""
    from ..compare import side_labels

    whys = [no_kernels_why(trace_a), no_kernels_why(trace_b)]
    if not any(whys) or any(
        _no_gpu_work(t) for t, w in zip((trace_a, trace_b), whys, strict=True) if not w
    ):
        return []
    labels = side_labels(trace_a.path, trace_b.path)[:2]
    return [
        f"{key} ({label}) has no CUDA kernels: {why}"
        for key, label, why in zip("AB", labels, whys, strict=True)
        if why
    ]


def _no_gpu_work(trace: Trace) -> bool:
    """Whether a trace without :func:`no_kernels_why` has no kernels either (no CUDA work)."""
    from ..errors import MissingDataError

    try:
        trace.require_kernels()
    except MissingDataError:
        return True
    return False


def pair_context(
    trace_a: Trace,
    trace_b: Trace,
    notes: list[str],
    title: str | None,
    side_args: dict[str, Any],
    per_side: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """What the page of two traces shows without a diff (``notes``: :func:`without_kernels`):
    the notes and each trace's sections, as a page of one trace shows them (``per_side``:
    :func:`.collect.collect_side`'s ``where`` and ``selected`` of A, of B)."""
    from ..compare import side_labels
    from .collect import collect_side

    label_a, label_b, _ = side_labels(trace_a.path, trace_b.path)
    a, b = per_side or ({}, {})
    sides = [
        collect_side(trace_a, key="a", label=label_a, **side_args, **a),
        collect_side(trace_b, key="b", label=label_b, **side_args, **b),
    ]
    return {
        "mode": "pair",
        "title": title or f"tracelens report: {label_a} → {label_b}",
        "sides": sides,
        "diff": None,
        "no_diff": [*notes, CANNOT_COMPARE],
    }
