"""Why two runs differ: totals, categories, kernels, launch order, danger-zone kernels, and an
evidence board of clues derived from them by rules.

    with tracelens.open("bs1.sqlite") as a, tracelens.open("bs16.sqlite") as b:
        d = tracelens.diff(a, b)
        d.clues          # tuple[Clue]: what changed, the numbers, what it suggests
        d.kernels        # polars DataFrame, ranked by how surprising each change is

The package is ``compare``, not ``diff``: a ``tracelens.diff`` submodule would replace the
function ``tracelens.diff`` as soon as it was imported. Layout:

    sides.py    the two sides: how they are named, and read (side by side when small)
    collect.py  what is read from one trace (query files, public functions)
    headline.py one side's totals and GPU time accounting (the headline figures)
    phase.py    both runs' period steps started at the same kernel
    shift.py    the kernels that carry a run's level shift in step time
    model/      TraceDiff, Clue, SequenceAlignment (result.py); one builder per table
                (totals, kernels, comparability, danger, figures)
    align.py    the launch sequences of two runs, aligned per device; devices paired
    stretches.py  two stretches matched exactly (captures cut at the ends set apart), by
                counts, or in windows: what align.py tallies
    period.py   the repeating step (launch motif) of a sequence, which align.py compares
    repetitions.py  what a step costs when the steps are the launch sequence's repetitions
    regions.py  NVTX region deltas: GPU time per range path, per step, A vs B
    clues/      the evidence board: one function per clue, a module per family
                (comparability, accounting, kernels, variants, memory, path, danger); rules and
                board order in data/clues.toml (spec.py reads them)
    notes.py    the notes under the board: steps, selections, what was left out
    gates.py    --fail-if
    sections.py the tables as rows of text, with their headings (every view's)
    render.py   terminal, Markdown and JSON views

Nothing here prints; the CLI and the report render a ``TraceDiff``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..filters import EventFilter
from ..units import fmt_bytes, fmt_ns, fmt_ratio
from .align import align_sequences
from .gates import GateResult, check_gates
from .model import COPY_KIND_LABELS, Clue, Comparability, SequenceAlignment, TraceDiff
from .notes import damage_notes, diff_notes, impact_steps, step_phase_note
from .phase import phase_alike
from .sides import collect_sides, side_labels

if TYPE_CHECKING:
    import polars as pl

    from ..trace import Trace
    from .collect import Side

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
    a: Trace | str | os.PathLike[str],
    b: Trace | str | os.PathLike[str],
    *,
    name: str = "demangled",
    where_a: EventFilter | None = None,
    where_b: EventFilter | None = None,
    label_a: str | None = None,
    label_b: str | None = None,
    nvtx_ranges: tuple[int | None, int | None] = (None, None),
    selected: tuple[str, ...] = (),
    keep_work: bool = False,
) -> TraceDiff:
    """Compare trace ``a`` (the baseline) with ``b``: open traces, or paths (opened with
    :func:`tracelens.open` and closed again before this returns). Ratios are B / A. ``nvtx_ranges``:
    how many NVTX ranges selected the work of each side (``filters.select_nvtx``), stated
    on the board unless ``selected`` says it; ``selected``: sentences saying what narrowed
    the sides (:func:`tracelens.report.selection.said`, as `tracelens diff` and the report
    word them), stated on the board. ``keep_work``: each side's GPU work read stays on
    ``TraceDiff.sides`` (``Side.work``, for the report's sections; about 250 MB per 5M
    operations)."""
    if isinstance(a, str | os.PathLike) or isinstance(b, str | os.PathLike):
        from contextlib import ExitStack

        from ..trace import open as open_trace

        with ExitStack() as stack:
            ta, tb = (
                stack.enter_context(open_trace(t)) if isinstance(t, str | os.PathLike) else t
                for t in (a, b)
            )
            return _diff_traces(
                ta, tb, name, where_a, where_b, label_a, label_b, nvtx_ranges, selected, keep_work
            )
    return _diff_traces(
        a, b, name, where_a, where_b, label_a, label_b, nvtx_ranges, selected, keep_work
    )


def _diff_traces(
    a: Trace,
    b: Trace,
    name: str,
    where_a: EventFilter | None,
    where_b: EventFilter | None,
    label_a: str | None,
    label_b: str | None,
    nvtx_ranges: tuple[int | None, int | None],
    selected: tuple[str, ...],
    keep_work: bool = False,
) -> TraceDiff:
    """:func:`diff` of two open traces."""
    from . import model
    from .align import align_devices
    from .clues import Context, evidence_board, threshold

    _check_name(name)
    util_limit = int(threshold("util_max_launches"))
    nvtx_limit = int(threshold("nvtx_max_launches"))
    label_a, label_b, same_file = side_labels(a.path, b.path, label_a, label_b)
    sa, sb, per_device = collect_sides(
        (a, b), name, (where_a, where_b), same_file, (util_limit, nvtx_limit), keep_work
    )
    phased = phase_alike((a, b), (where_a, where_b), (sa, sb), nvtx_limit)

    typical, kernels, by_demangled = _kernel_tables(sa, sb, name)
    alignment = align_devices(sa, sb)
    inner = None if same_file else _steps_own_work((a, b), (sa, sb), (where_a, where_b), name)
    steps_a, steps_b = _steps(sa, sb, alignment, inner)
    reps = model.replicas(sa, sb)  # devices running the work, where the runs differ in it
    danger = _danger(sa, sb, by_demangled, typical, (steps_a, steps_b), reps)
    devices = model.device_changes(alignment, *per_device, threshold("typical_weight_cap"))
    score, comparable = _comparability(sa, sb, kernels, alignment)

    copies = model.copies_table(sa, sb)
    variant_swaps = model.variants_table(kernels)
    figures = _figures(sa, sb, copies, kernels, danger, alignment, score, (steps_a, steps_b), reps)
    context = Context(
        sa, sb, copies, kernels, variant_swaps, alignment, danger, typical, score,
        comparable, steps_b, steps_a, devices, reps,
    )  # fmt: skip
    clues = evidence_board(context)
    figures["clues"] = float(len(clues))
    # ``selected`` says the ranges itself (the CLI's and the report's sentences)
    counted = (None, None) if selected else nvtx_ranges
    whole = TraceDiff(
        label_a=label_a,
        label_b=label_b,
        name_kind=name,
        totals=model.totals_table(sa, sb),
        copies=copies,
        categories=model.categories_table(by_demangled),
        kernels=kernels,
        variant_swaps=variant_swaps,
        alignment=alignment,
        danger=danger,
        clues=tuple(clues),
        figures=figures,
        comparable=comparable,
        notes=tuple(selected)
        + diff_notes(sa, sb, alignment, counted, util_limit, label_a if same_file else None)
        + _later_notes(phased, clues, alignment, (a, b), same_file),
        typical=typical,
        comparability=score,
        steps_a=steps_a,
        steps_b=steps_b,
        replicas=reps,
        nvtx_ranges=nvtx_ranges,
        **_regions(sa, sb),
        sides=(sa, sb),
    )
    if inner is None:
        return whole
    from .outside import merged

    return merged(whole, inner)


def _later_notes(phased, clues, alignment, traces, same_file: bool) -> tuple[str, ...]:
    """The notes after the steps' and selections': how the steps were phased alike, what
    the path clue's launch numbers count, the damaged records either trace holds."""
    return (
        ((phased,) if phased else ())
        + step_phase_note(clues, alignment)
        + damage_notes(*traces, same_file)
    )


# Why the outside_steps figures are not measured (compare/outside.py)
_NO_OUTSIDE = "the steps hold most of both captures' GPU time, or a capture has none"


def _steps(sa: Side, sb: Side, alignment, inner: TraceDiff | None) -> tuple:
    """The steps each run's per-step figures count (:func:`.notes.impact_steps`); those of
    the diff of the steps' own work when there is one (``inner``: the steps hold only part
    of the work, :func:`_steps_own_work`), whose tables count them."""
    from . import model

    if inner is not None:
        return inner.steps_a, inner.steps_b
    return impact_steps(sa, sb, model.steps_of(alignment))


def _steps_own_work(traces, sides, wheres, name: str) -> TraceDiff | None:
    """The diff of the steps' own work when both runs have steps and one has work outside
    them (:func:`.outside.partial_steps`: a prefill, setup): the board and per-step figures
    then come from it, and the work outside the steps is a clue of its own
    (:mod:`.outside`); else None. Only for whole captures: a filtered side was narrowed by
    the caller; nor for a file compared with itself, whose steps' work is the same on both
    sides (every figure alike, read once)."""
    from . import outside

    if any(w is not None and not w.is_whole() for w in wheres):
        return None
    if not outside.partial_steps(*sides):
        return None
    narrowed = outside.step_filters(traces)
    if narrowed is None:
        return None
    return _diff_traces(*traces, name, *narrowed, None, None, (None, None), ())


def _danger(sa: Side, sb: Side, by_demangled, typical, steps: tuple, reps: tuple) -> pl.DataFrame:
    """The danger table, each kernel's growth judged per step when both sides have steps,
    else against the work ratio of the two captures (model.work_ratio); per step and
    device when the runs spread their work over different numbers of devices (``reps``:
    :func:`.model.replicas`)."""
    from . import model
    from .clues import threshold

    launches = (sa.totals["kernel_launches"] or 0, sb.totals["kernel_launches"] or 0)
    work = model.work_ratio(steps, launches) * reps[1] / reps[0]
    if all(steps):
        steps = (steps[0] * reps[0], steps[1] * reps[1])
    return model.danger_table(by_demangled, threshold("danger_growth"), typical.ratio, work, steps)


def _check_name(name: str) -> None:
    """The diff pairs kernels by their demangled or short name; anything else is one line."""
    from ..census import check_name_kind
    from ..errors import UsageError

    if name not in ("demangled", "short"):
        raise UsageError(f"unknown {{param}} {name!r}; use one of: demangled, short", param="name")
    check_name_kind(name)


def _regions(sa, sb) -> dict:
    """The NVTX region deltas, when both runs have ranges that launched GPU work."""
    if sa.regions is None or sb.regions is None:
        return {}
    from .regions import region_table, steps_table

    table = region_table(sa.regions, sb.regions, sa.steps, sb.steps)
    return {"nvtx_regions": table, "nvtx_steps": steps_table(sa.regions, sb.regions, table)}


def _kernel_tables(sa, sb, name: str):
    """The typical per-call change, the kernels ranked by surprise (by the name the diff
    shows), and the same by demangled name (what categories and danger rules read)."""
    from . import model
    from .clues import threshold

    joined = model.joined_kernels(sa, sb)
    typical = model.typical_change(joined, threshold("typical_weight_cap"))
    kernels = model.ranked_kernels(joined, typical.ratio)
    if name == "demangled":
        return typical, kernels, kernels
    by_demangled = model.ranked_kernels(model.joined_kernels(sa, sb, demangled=True), 1.0)
    return typical, kernels, by_demangled


def _figures(sa, sb, copies, kernels, danger, alignment, score, steps, reps) -> dict[str, float]:
    """The named figures --fail-if reads (``clues`` is added with the board). ``steps``:
    each capture's steps as the clues count them (:func:`.notes.impact_steps`); ``reps``:
    the devices that run them, where the runs differ in it (:func:`.model.replicas`)."""
    from . import model
    from .gates import Figures, per_step_figures, side_figures

    figures = Figures(
        model.figures(sa, sb, copies, kernels, danger, alignment, score.factors["shared_time"])
    )
    figures |= per_step_figures(sa, sb, steps, reps)
    figures |= side_figures(sa, sb)  # with the side figures not measured, for the gates
    figures["launch_overlap"] = score.factors["shared_launches"]
    figures["comparability"] = score.score
    # measured when the steps hold only part of the work (.outside.merged)
    figures.not_measured |= dict.fromkeys(("outside_steps_ms", "outside_steps_ms_a"), _NO_OUTSIDE)
    return figures


def _comparability(sa, sb, kernels, alignment) -> tuple[Comparability, bool]:
    """The comparability score, and whether the runs are comparable. A short window where
    every kernel was swapped (same launches, other kernels) is still the same program: the
    launch counts and the category mix say so."""
    from . import model
    from .clues import comparability_weights, threshold

    score = model.comparability(
        sa, sb, kernels, alignment, comparability_weights(), threshold("comparable_score")
    )
    launches_a, launches_b = int(kernels["a_instances"].sum()), int(kernels["b_instances"].sum())
    shape_ratio = threshold("same_shape_launch_ratio")
    same_shape = (
        min(launches_a, launches_b) >= threshold("same_shape_min_launches")
        and 1 / shape_ratio <= (launches_b / launches_a if launches_a else 0) <= shape_ratio
        and score.factors["category_mix"] >= threshold("same_shape_category_overlap")
    )
    comparable = score.comparable or (same_shape and bool(kernels["a_total_ns"].sum()))
    return score, comparable and bool(kernels["b_total_ns"].sum())
