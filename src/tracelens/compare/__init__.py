"""Why two runs differ: totals, categories, kernels, launch order, danger-zone kernels, and an
evidence board of clues derived from them by rules.

    with tracelens.open("bs1.sqlite") as a, tracelens.open("bs16.sqlite") as b:
        d = tracelens.diff(a, b)
        d.clues          # tuple[Clue]: what changed, the numbers, what it suggests
        d.kernels        # polars DataFrame, ranked by how surprising each change is

The package is ``compare``, not ``diff``: a ``tracelens.diff`` submodule would replace the
function ``tracelens.diff`` as soon as it was imported. Layout:

    collect.py  what is read from one trace (query files, public functions)
    model.py    TraceDiff, Clue, SequenceAlignment; one builder per table
    align.py    the launch sequences of two runs, aligned per device
    clues.py    the evidence board: one function per clue; rules in data/clues.toml
    gates.py    --fail-if
    render.py   terminal, Markdown and JSON views

Nothing here prints; the CLI and the report render a ``TraceDiff``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..filters import EventFilter
from ..units import fmt_bytes, fmt_ns, fmt_ratio
from .align import align_sequences
from .gates import GateResult, check_gates
from .model import COPY_KIND_LABELS, Clue, SequenceAlignment, TraceDiff

if TYPE_CHECKING:
    from ..trace import Trace

__all__ = [
    "COPY_KIND_LABELS",
    "Clue",
    "GateResult",
    "SequenceAlignment",
    "TraceDiff",
    "align_sequences",
    "check_gates",
    "diff",
    "fmt_bytes",
    "fmt_ns",
    "fmt_ratio",
]


def diff(
    a: Trace,
    b: Trace,
    *,
    name: str = "demangled",
    where_a: EventFilter | None = None,
    where_b: EventFilter | None = None,
    label_a: str | None = None,
    label_b: str | None = None,
) -> TraceDiff:
    """Compare trace ``a`` (the baseline) with ``b``. Ratios are B / A."""
    import polars as pl

    from ..census import check_name_kind
    from ..errors import UsageError
    from . import model
    from .align import align_devices
    from .clues import Context, evidence_board, threshold
    from .collect import ALIGN_LIMIT, collect

    if name not in ("demangled", "short"):
        raise UsageError(f"unknown --name {name!r}; use one of: demangled, short")
    check_name_kind(name)
    sa = collect(a, name, where_a or EventFilter())
    sb = collect(b, name, where_b or EventFilter())
    label_a = label_a or a.path.name
    label_b = label_b or b.path.name
    if label_a == label_b:
        label_a, label_b = f"A ({label_a})", f"B ({label_b})"

    joined = model.joined_kernels(sa, sb)
    overall = model.typical_ratio(joined)
    kernels = model.ranked_kernels(joined, overall)
    danger = model.danger_table(kernels, threshold("danger_growth"))
    alignment = align_devices(sa, sb)

    # Comparability: do the runs share their kernels? By launches, not time: a GEMM swap can
    # move most of the time into kernels only one side runs while the program is the same.
    time_a, time_b = int(kernels["a_total_ns"].sum()), int(kernels["b_total_ns"].sum())
    launches_a, launches_b = int(kernels["a_instances"].sum()), int(kernels["b_instances"].sum())
    both = kernels.filter(pl.col("status") == "both")
    launches_both = int(both["a_instances"].sum() + both["b_instances"].sum())
    launch_overlap = launches_both / ((launches_a + launches_b) or 1)
    grand = time_a + time_b
    overlap = float((both["a_total_ns"].sum() + both["b_total_ns"].sum()) / grand) if grand else 0.0
    # A short window where every kernel was swapped (same launches, other kernels) is still
    # the same program: fall back on launch counts and the category mix.
    shape_ratio = threshold("same_shape_launch_ratio")
    same_shape = (
        min(launches_a, launches_b) >= threshold("same_shape_min_launches")
        and 1 - (shape_ratio - 1) <= (launches_b / launches_a if launches_a else 0) <= shape_ratio
        and model.category_overlap(kernels) >= threshold("same_shape_category_overlap")
    )
    comparable = (
        (launch_overlap >= threshold("comparable_launch_overlap") or same_shape)
        and bool(time_a)
        and bool(time_b)
    )

    copies = model.copies_table(sa, sb)
    variant_swaps = model.variants_table(kernels)
    figures = model.figures(sa, sb, copies, kernels, danger, alignment, overlap)
    figures["launch_overlap"] = float(launch_overlap)
    context = Context(
        sa,
        sb,
        copies,
        kernels,
        variant_swaps,
        alignment,
        danger,
        overall,
        launch_overlap,
        comparable,
    )
    clues = evidence_board(context)
    figures["clues"] = float(len(clues))
    notes = []
    if any(al.truncated for al in alignment):
        notes.append(f"launch order compared for the first {ALIGN_LIMIT:,} launches per device")
    return TraceDiff(
        label_a=label_a,
        label_b=label_b,
        name_kind=name,
        totals=model.totals_table(sa, sb),
        copies=copies,
        categories=model.categories_table(kernels),
        kernels=kernels,
        variant_swaps=variant_swaps,
        alignment=alignment,
        danger=danger,
        clues=tuple(clues),
        figures=figures,
        comparable=comparable,
        notes=tuple(notes),
    )
