"""What the board's reader should know about how a diff was made (``TraceDiff.notes``): the
steps each capture holds and which the per-step impacts count (:func:`impact_steps`), the
NVTX selection, what was left out for speed, devices paired by what they run, damaged
records."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..trace import Trace


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
    from .clues.step_units import step_coverage

    counts = _work_counts(sa.steps, sb.steps, (sa.cut_steps, sb.cut_steps))
    if None in counts:
        return motif
    if min(step_coverage(sa), step_coverage(sb)) < threshold("step_time_coverage"):
        return motif
    return counts


def _step_counts(steps_a, steps_b) -> tuple[int | None, int | None]:
    return tuple(s.count if s is not None and s.count else None for s in (steps_a, steps_b))


def _work_counts(steps_a, steps_b, cut: tuple[int, int]) -> tuple[int | None, int | None]:
    """Each side's steps, with the steps' worth of work in the re-phased end steps left
    out (``cut``: each ``Side.cut_steps``): --steps 5:8 re-phased holds 3 whole steps and
    two parts that hold a fourth step's kernels, and its kernel time is 4 steps'."""
    counts = _step_counts(steps_a, steps_b)
    return tuple(c and c + k for c, k in zip(counts, cut, strict=True))


def _motif_note(used, motif, steps_a, steps_b, cut: tuple[int, int] = (0, 0)) -> list[str]:
    """Which steps the clues' per-step impacts count (``used``: :func:`impact_steps`), said
    where the steps note above (``trace.steps``) does not say it alone: where they are
    those steps and the launch sequence (``motif``) repeats another number of times (the
    calls per step count calls per repetition), and where they are the motif's
    repetitions. ``cut``: each side's ``Side.cut_steps`` (:func:`_work_counts`)."""
    counts = _work_counts(steps_a, steps_b, cut)
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


# The path clues that can say "in every step, launch #k changed"
_PATH_CLUES = frozenset({"launch_sequence_diverges", "same_count_different_path"})


def step_phase_note(clues, alignment) -> tuple[str, ...]:
    """Where "in every step, launch #k" counts from, when a path clue says it: A's step
    from its launch of the kernel the steps are phased on (``step_first``), which need not
    be the step's first launch as the program sees it, so k need not match the launch's
    place in an NVTX step or a fingerprint."""
    from .clues import short_name
    from .clues.path import path_alignment

    al = path_alignment(alignment)
    if al is None or not al.step_first or not any(c.id in _PATH_CLUES for c in clues):
        return ()
    if "in every step, launch #" not in next(c.evidence for c in clues if c.id in _PATH_CLUES):
        return ()
    return (
        f"the path clue's \"launch #k\" counts A's step on {al.where} from its "
        f"{short_name(al.step_first)} launch (launch #1: the kernel the repeating steps are "
        "phased on, once per step), which need not be the step's first launch; a launch B "
        "added stands before A's launch #k",
    )


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


def damage_notes(a: Trace, b: Trace, same_file: bool) -> tuple[str, ...]:
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


def diff_notes(
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
    used = impact_steps(sa, sb, motif)
    notes += _motif_note(used, motif, sa.steps, sb.steps, (sa.cut_steps, sb.cut_steps))
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
