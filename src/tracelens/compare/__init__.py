"""Why two runs differ: totals, categories, kernels, launch order, danger-zone kernels, and an
evidence board of clues derived from them by rules.

    with tracelens.open("bs1.sqlite") as a, tracelens.open("bs16.sqlite") as b:
        d = tracelens.diff(a, b)
        d.clues          # tuple[Clue]: what changed, the numbers, what it suggests
        d.kernels        # polars DataFrame, ranked by how surprising each change is

The package is ``compare``, not ``diff``: a ``tracelens.diff`` submodule would replace the
function ``tracelens.diff`` as soon as it was imported. Layout:

    collect.py  what is read from one trace (query files, public functions)
    model/      TraceDiff, Clue, SequenceAlignment (result.py); one builder per table
                (totals, kernels, comparability, danger, figures)
    align.py    the launch sequences of two runs, aligned per device; devices paired
    period.py   the repeating step (launch motif) of a sequence, which align.py compares
    regions.py  NVTX region deltas: GPU time per range path, per step, A vs B
    clues/      the evidence board: one function per clue, a module per family
                (comparability, accounting, kernels, memory, path, danger); rules and
                board order in data/clues.toml (spec.py reads them)
    gates.py    --fail-if
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

if TYPE_CHECKING:
    from pathlib import Path

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


def side_labels(
    path_a: Path, path_b: Path, label_a: str | None = None, label_b: str | None = None
) -> tuple[str, str, bool]:
    """How the two sides are named, and whether they are one file. By default each side is
    its file name; two files of the same name in different directories are told apart by
    as many parent directories as it takes (``run1/x.sqlite``, ``run2/x.sqlite``); a file
    compared with itself keeps its name on both sides (a note says so). Given labels are
    kept as they are unless they are equal (then ``A (...)``/``B (...)``)."""
    try:
        same_file = os.path.samefile(path_a, path_b)
    except OSError:
        same_file = False
    if label_a is None and label_b is None and not same_file and path_a.name == path_b.name:
        parts_a, parts_b = path_a.resolve().parts, path_b.resolve().parts
        keep = 1
        while keep < min(len(parts_a), len(parts_b)) and parts_a[-keep:] == parts_b[-keep:]:
            keep += 1
        label_a, label_b = "/".join(parts_a[-keep:]), "/".join(parts_b[-keep:])
    label_a = label_a or path_a.name
    label_b = label_b or path_b.name
    if label_a == label_b and not same_file:
        label_a, label_b = f"A ({label_a})", f"B ({label_b})"
    return label_a, label_b, same_file


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
    on the board; ``selected``: other sentences saying what narrowed the sides (the steps
    of ``stepwork.select_steps``), stated on the board too. ``keep_work``: each side's GPU
    work read stays on ``TraceDiff.sides`` (``Side.work``, for the report's sections; about
    250 MB per 5M operations)."""
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
    sa, sb, per_device = _collect_sides(
        (a, b), name, (where_a, where_b), same_file, (util_limit, nvtx_limit), keep_work
    )

    typical, kernels, by_demangled = _kernel_tables(sa, sb, name)
    alignment = align_devices(sa, sb)
    steps_a, steps_b = impact_steps(sa, sb, model.steps_of(alignment))
    work = model.work_ratio(
        (steps_a, steps_b), (sa.totals["kernel_launches"] or 0, sb.totals["kernel_launches"] or 0)
    )
    danger = model.danger_table(by_demangled, threshold("danger_growth"), typical.ratio, work)
    devices = model.device_changes(alignment, *per_device, threshold("typical_weight_cap"))
    score, comparable = _comparability(sa, sb, kernels, alignment)

    copies = model.copies_table(sa, sb)
    variant_swaps = model.variants_table(kernels)
    figures = _figures(sa, sb, copies, kernels, danger, alignment, score)
    context = Context(
        sa,
        sb,
        copies,
        kernels,
        variant_swaps,
        alignment,
        danger,
        typical,
        score,
        comparable,
        steps_b,
        steps_a,
        devices,
    )
    clues = evidence_board(context)
    figures["clues"] = float(len(clues))
    return TraceDiff(
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
        + _notes(sa, sb, alignment, nvtx_ranges, util_limit, label_a if same_file else None)
        + _damage_notes(a, b, same_file),
        typical=typical,
        comparability=score,
        steps_a=steps_a,
        steps_b=steps_b,
        nvtx_ranges=nvtx_ranges,
        **_regions(sa, sb),
        sides=(sa, sb),
    )


def _check_name(name: str) -> None:
    """The diff pairs kernels by their demangled or short name; anything else is one line."""
    from ..census import check_name_kind
    from ..errors import UsageError

    if name not in ("demangled", "short"):
        raise UsageError(f"unknown {{param}} {name!r}; use one of: demangled, short", param="name")
    check_name_kind(name)


def _collect_sides(traces, name, wheres, same_file, limits, keep_work):
    """What the diff reads of each side (:func:`.collect.collect`), through each side's
    filter (None: none), and each side's kernels per device (:func:`_collect_side`). A
    file compared with itself through the same filter is one read, made once (a selection
    id belongs to the trace that made it, so none may be in it). Two different exports
    are read side by side when :func:`_side_by_side` allows it."""
    (a, b) = traces
    where_a, where_b = (where or EventFilter() for where in wheres)
    same_read = same_file and where_a == where_b and where_a.selection is None
    if same_read:
        # One read compared with itself: every device pair changed alike (1.0), nothing to
        # count.
        sa, kernels_a = _collect_side(a, name, where_a, limits, keep_work, False)
        return sa, sa, (kernels_a, kernels_a)
    if not same_file and _side_by_side(a, b):
        import contextvars
        from concurrent.futures import ThreadPoolExecutor

        # B in a second thread, in this thread's context (the engine's limits): the reads
        # and sweeps run in DuckDB and polars, which leave the interpreter lock, so the two
        # sides share the machine's cores instead of taking turns.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="tracelens-diff") as pool:
            context = contextvars.copy_context()
            side_b = pool.submit(context.run, _collect_side, b, name, where_b, limits, keep_work)
            sa, kernels_a = _collect_side(a, name, where_a, limits, keep_work)
            sb, kernels_b = side_b.result()
    else:
        sa, kernels_a = _collect_side(a, name, where_a, limits, keep_work)
        sb, kernels_b = _collect_side(b, name, where_b, limits, keep_work)
    return sa, sb, (kernels_a, kernels_b)


def _side_by_side(a: Trace, b: Trace) -> bool:
    """Whether two different exports are read at once, each in its own thread: when both
    are files (SQLite exports or Parquet-cached ones) whose sizes add up to at most
    ``concurrent_sides_max_mb`` (data/clues.toml): the two reads then hold their peak
    memory at the same time."""
    import stat

    from .clues import threshold

    total = 0
    for trace in (a, b):
        try:
            info = os.stat(trace.path)
        except OSError:
            return False
        if not stat.S_ISREG(info.st_mode):
            return False
        total += info.st_size
    return total <= threshold("concurrent_sides_max_mb") * 1e6


def _collect_side(trace, name, where, limits, keep_work, per_device=True):
    """One side (:func:`.collect.collect`) and, unless its export lists one GPU, its
    kernels per device (:func:`.model.device_kernels`, for the per-device typical change),
    from the figures per device and name id collect takes while it reads the side (not
    the work: ~360 MB on two 4-GPU 5M-kernel traces). A trace of one GPU reads as before
    (None), as does any with ``per_device`` false."""
    from . import model
    from .collect import collect

    util_limit, nvtx_limit = limits
    many = per_device and len(trace.gpus()) != 1
    side = collect(trace, name, where, util_limit, nvtx_limit, keep_work, per_device=many)
    kernels = model.device_kernels(side) if many else None
    side.kernel_ids_by_device = None
    return side, kernels


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


def _figures(sa, sb, copies, kernels, danger, alignment, score) -> dict[str, float]:
    """The named figures --fail-if reads (``clues`` is added with the board)."""
    from . import model
    from .gates import Figures, side_figures

    figures = Figures(
        model.figures(sa, sb, copies, kernels, danger, alignment, score.factors["shared_time"])
    )
    figures |= side_figures(sa, sb)  # with the side figures not measured, for the gates
    figures["launch_overlap"] = score.factors["shared_launches"]
    figures["comparability"] = score.score
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


def _step_notes(steps_a, steps_b) -> list[str]:
    """How many steps each capture holds (``trace.steps`` of each side) and what they were
    found from, when either has any; a side without steps is compared per launch, and the
    note says so."""
    found = [s if s is not None and s.count else None for s in (steps_a, steps_b)]
    if not any(found):
        return []

    def held(side: str, s) -> str:
        return (
            f"{side} {s.count:,} step{'s' if s.count != 1 else ''}" if s else f"{side} none found"
        )

    sources = {s.source or s.method for s in found if s}
    if len(sources) == 1:
        text = f"{held('A', found[0])}, {held('B', found[1])}, from {sources.pop()}"
    else:
        text = "; ".join(
            f"{held(side, s)}, from {s.source or s.method}"
            for side, s in zip("AB", found, strict=True)
        )
    tail = "" if all(found) else " (figures per launch where a side has none)"
    return [f"steps: {text}{tail}"]


def impact_steps(sa, sb, motif: tuple[int | None, int | None]) -> tuple[int | None, int | None]:
    """How many steps each capture holds for the clues' per-step impacts: the steps
    ``tracelens steps`` finds (``Side.steps``: NVTX step ranges first, else the launch
    period) when both sides have steps that hold most of their GPU busy time (threshold
    ``step_time_coverage``, as the steady-step clue); else the repetitions of the launch
    sequence's motif on the busiest device (``motif``: ``model.steps_of``) when both repeat
    one; else none (impacts in total)."""
    from .clues import threshold
    from .clues.accounting import step_coverage

    counts = _step_counts(sa.steps, sb.steps)
    if None in counts:
        return motif
    if min(step_coverage(sa), step_coverage(sb)) < threshold("step_time_coverage"):
        return motif
    return counts


def _step_counts(steps_a, steps_b) -> tuple[int | None, int | None]:
    return tuple(s.count if s is not None and s.count else None for s in (steps_a, steps_b))


def _motif_note(used, motif, steps_a, steps_b) -> list[str]:
    """Which steps the clues' per-step impacts count (``used``: :func:`impact_steps`), said
    where the steps note above (``trace.steps``) does not say it alone: where they are
    those steps and the launch sequence (``motif``) repeats another number of times (the
    calls per step count calls per repetition), and where they are the motif's
    repetitions."""
    counts = _step_counts(steps_a, steps_b)
    if None not in counts and used == counts:
        if None in motif or motif == counts:
            return []
        return [
            f"per-step clue impacts count the steps above; the launch sequence on the busiest "
            f"device repeats A {motif[0]:,}, B {motif[1]:,} times (calls per step count per "
            "repetition)"
        ]
    if None in motif or used != motif:
        return []
    which = " (not the steps above, which tracelens steps finds)" if any(counts) else ""
    return [
        f"per-step clue impacts count the repetitions of the launch sequence on the busiest "
        f"device: A {motif[0]:,}, B {motif[1]:,}{which}"
    ]


def _step_region_note(sa, sb) -> list[str]:
    """Said when the NVTX region table counts the ranges that are the steps themselves
    (one name per step: 'step 7', 'ProfilerStep#7') as one region (regions._steps_by_name)."""
    if sa.regions is None or sb.regions is None:
        return []
    from .regions import step_regions

    named = sorted(set(step_regions(sa.regions)) | set(step_regions(sb.regions)))
    if not named:
        return []
    return [
        "NVTX regions: the ranges that are the steps themselves, one name per step, are one "
        "region (" + ", ".join(f"'{n}'" for n in named) + "), compared per step"
    ]


def _damage_notes(a: Trace, b: Trace, same_file: bool) -> tuple[str, ...]:
    """Each side's GPU records that end before they start, left out of every figure
    (:meth:`~tracelens.Trace.damage_note`, as every command says it), prefixed by its side
    (``A and B``: a file compared with itself). Each side's whole read counted the records
    it kept (:func:`.collect._sorted_work`): a sound export needs no scan for it."""
    if same_file:
        note = a.damage_note()
        return (f"A and B: {note}",) if note else ()
    return tuple(
        f"{side}: {note}" for side, trace in (("A", a), ("B", b)) if (note := trace.damage_note())
    )


def _sparse_region_note(sa, sb) -> list[str]:
    """Said when the NVTX region table compares regions held in under half of the steady
    steps by their mean per step, not the median over steps (:func:`.regions.sparse_regions`:
    that median is 0), naming the first few."""
    if sa.regions is None or sb.regions is None:
        return []
    from .regions import sparse_regions

    sparse = sparse_regions(sa.regions, sb.regions, sa.steps, sb.steps)
    if not sparse:
        return []
    named = ", ".join(f"'{p}'" for p in sparse[:_NAMED_REGIONS])
    more = len(sparse) - _NAMED_REGIONS
    return [
        "NVTX regions held in under half of the steady steps of a run are compared by their "
        "mean per steady step, not the median (which is 0 for them): "
        + named
        + (f" and {more:,} more" if more > 0 else "")
    ]


# Regions a note names before it says how many more.
_NAMED_REGIONS = 3


def _notes(
    sa, sb, alignment, nvtx_ranges, util_limit: int, same_file: str | None
) -> tuple[str, ...]:
    """What the board's reader should know about how it was made (``same_file``: the name
    of the file compared with itself, if it is)."""
    from . import model
    from .clues import threshold

    notes = []
    if same_file:
        notes.append(f"A and B are the same file ({same_file}), compared with itself")
    if nvtx_ranges != (None, None):
        ra, rb = nvtx_ranges
        notes.append(
            "only the GPU work launched inside the matching NVTX ranges: "
            + ", ".join(
                f"{n:,} range{'s' if n != 1 else ''} matched in {side}"
                for n, side in ((ra, "A"), (rb, "B"))
                if n is not None
            )
        )
    notes += _step_notes(sa.steps, sb.steps)
    motif = model.steps_of(alignment)
    notes += _motif_note(impact_steps(sa, sb, motif), motif, sa.steps, sb.steps)
    if sa.time is None or sb.time is None:
        notes.append(
            f"GPU time accounting (compute, exposed communication, idle) left out above "
            f"{util_limit:,} launches per trace, for speed: run `tracelens util` on each"
        )
    notes += _step_region_note(sa, sb)
    notes += _sparse_region_note(sa, sb)
    big = [
        side
        for side, s in (("A", sa), ("B", sb))
        if s.has_nvtx and s.totals["kernel_launches"] > int(threshold("nvtx_max_launches"))
    ]
    if big:
        notes.append(
            f"NVTX region deltas left out above {int(threshold('nvtx_max_launches')):,} "
            f"launches per trace ({' and '.join(big)}), for speed: run `tracelens nvtx --gpu "
            "--group path` on each"
        )
    moved = [al for al in alignment if al.device_b is not None and al.device_b != al.device]
    if moved:
        pairs = [(al.device, al.device_b) for al in alignment if al.device_b is not None]
        pairs += [
            (al.device, al.device)
            for al in alignment
            if al.device_b is None and al.launches_a and al.launches_b
        ]
        (da, db), *rest = sorted(pairs)
        notes.append(
            "devices compared by the kernels they launch, not by number: device "
            f"{da} of A with device {db} of B"
            + "".join(f", {x} with {y}" for x, y in rest)
            + " (compare/align.py, pair_devices)"
        )
    if any(al.truncated for al in alignment):
        notes.append(
            "launch order compared step by step, or in windows, where the sequences are long: "
            "the matched counts are close estimates (compare/align.py states the bound)"
        )
    return tuple(notes)
