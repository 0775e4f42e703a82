"""The path comparison as text for a person (terminal, Markdown) or JSON for a program.
Returns strings: the command line decides where they go."""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING

from .compare import ADDED, CONFIG, ORDER, REMOVED, VARIANT, Divergence, KernelChange, PathDiff
from .model import CountedChange

if TYPE_CHECKING:
    from .ends import CaptureEnds

_ORDER = {VARIANT: 0, ADDED: 1, REMOVED: 2, ORDER: 3, CONFIG: 4}
_KIND_LABEL = {
    VARIANT: "variant",
    CONFIG: "config",
    ADDED: "added",
    REMOVED: "removed",
    ORDER: "order",
}


def region_label(
    region: tuple[str, ...] | list[str], in_step: bool = False, nvtx: bool = True
) -> str:
    """NVTX labels joined outermost first; an empty region is the step itself (launches in
    no range below the step's own) or, without steps, the launches outside every range.
    ``nvtx``: False when neither capture's regions are NVTX ranges (their steps are): the
    step is then the whole step, and the launches in none are outside any step (a trace
    without NVTX read '(the step, outside deeper NVTX ranges)')."""
    if region:
        return " > ".join(region)
    if not nvtx:
        return "(the whole step)" if in_step else "(outside any step)"
    return "(the step, outside deeper NVTX ranges)" if in_step else "(outside NVTX ranges)"


def _dims(d: tuple) -> str:
    return "×".join("?" if v is None else str(v) for v in d)


def _steps(steps: tuple[int, ...]) -> str:
    if not steps:
        return ""
    if list(steps) == list(range(steps[0], steps[0] + len(steps))) and len(steps) > 2:
        return f", steps {steps[0]}-{steps[-1]}"
    return f", step{'s' if len(steps) > 1 else ''} {', '.join(map(str, steps))}"


def change_text(c: KernelChange, *, verb: bool = True) -> str:
    """One change in words: ``X replaced Y``, ``X: grid 1×1×1 → 16×1×1``, ``added X``
    (``X`` alone for an added or removed kernel when ``verb`` is False), ``X where A had Y
    (...in another order)``."""
    danger = f" [danger: {', '.join(c.danger)}]" if c.danger else ""
    if c.kind == ORDER:
        return f"{c.b.name} where A had {c.a.name} (the same kernels as often, in another order)"
    if c.kind == VARIANT:
        return f"{c.b.name} replaced {c.a.name}{danger}"
    if c.kind == CONFIG:
        parts = []
        if c.a.grid != c.b.grid:
            parts.append(f"grid {_dims(c.a.grid)} → {_dims(c.b.grid)}")
        if c.a.block != c.b.block:
            parts.append(f"block {_dims(c.a.block)} → {_dims(c.b.block)}")
        return f"{c.b.name}: {', '.join(parts)} (same kernel, other launch configuration)"
    if c.kind in (ADDED, REMOVED):
        kernel = c.b if c.kind == ADDED else c.a
        return f"{c.kind + ' ' if verb else ''}{kernel.name}{danger}"


def divergence_text(d: Divergence, nvtx: bool = True) -> str:
    """Where ``d`` is and what changed there (``nvtx``: as :func:`region_label`), its launch
    said as what the number counts: "launch #340 of the capture (#4 of region prefill)"
    (outside the steps), "launch #57 of step 2 (#8 of region layers.3)" ("launch #5 of step
    1" in a region that is the whole step), or, where the documents do not place it in
    launch order, "launch #4 of region prefill"."""
    label = region_label(d.region, d.step is not None, nvtx)
    where = label + ("" if d.step is None else f", step {d.step}")
    where += f", device {d.device}"
    if d.change is None:
        return f"{where}: {d.detail}"
    in_region = f"#{d.change.position:,} of {f'region {label}' if d.region else 'its region'}"
    if d.launch is None:
        return f"{where}, launch {in_region}: {change_text(d.change)}"
    counted = "the capture" if d.step is None else f"step {d.step}"
    # a region that is the whole step (or capture) counts as it does: said once
    same = not d.region and d.launch == d.change.position
    also = "" if same else f" ({in_region})"
    return f"{where}, launch #{d.launch:,} of {counted}{also}: {change_text(d.change)}"


def capture_text(ends: CaptureEnds) -> str:
    """Where two captures start and end apart, worded as ``tracelens diff`` words a capture
    difference (:mod:`tracelens.compare.clues.path`), a clause for the start and one for the
    end, the steps said in the first: "B's capture ends earlier (it holds 3 steps, A 8): A's
    last 37 launches are past its end, not compared". Where each capture holds launches
    before the other's start (past its end), each in some region, that end is said of
    both. With :attr:`CaptureEnds.ambiguous` it also says that which capture started later
    is not known."""
    said = [
        clause
        for clause in (
            _end_clause(ends.before_start_a, ends.before_start_b, start=True),
            _end_clause(ends.past_end_a, ends.past_end_b, start=False),
        )
        if clause is not None
    ]
    (subject, first), *rest = said
    clauses = [first.format(steps=f" ({_steps_held(ends, subject)})")]
    clauses += [text.format(steps="") for _subject, text in rest]
    if ends.ambiguous:
        clauses.append(
            "which capture started later is not known: every step is the same program, and "
            "a capture that started a step later reads as one that ended a step earlier (the "
            "documents hold no times)"
        )
    return "; ".join(clauses)


def _end_clause(of_a: int, of_b: int, *, start: bool) -> tuple[str | None, str] | None:
    """(its subject: "A", "B" or None for both, the clause) for the captures' start
    (``start``) or end, from A's and B's launches before the other's start (past its end);
    ``{steps}`` follows the subject. None when neither holds any."""
    which = "first" if start else "last"
    if of_a and of_b:  # each holds some, in another region
        where = "before the other's start" if start else "past the other's end"
        return None, (
            f"the captures {'start' if start else 'end'} apart{{steps}}: A's {which} {of_a:,} "
            f"and B's {which} {of_b:,} launches are each {where}, region by region, not "
            "compared"
        )
    if not (of_a or of_b):
        return None
    short, long, n = ("B", "A", of_a) if of_a else ("A", "B", of_b)
    moved, where = (
        ("starts later", "before its start") if start else ("ends earlier", "past its end")
    )
    return short, (
        f"{short}'s capture {moved}{{steps}}: {long}'s {which} {_launches(n)} {where}, not compared"
    )


def _launches(n: int) -> str:
    return "launch is" if n == 1 else f"{n:,} launches are"


def _steps_held(ends: CaptureEnds, side: str | None) -> str:
    """``it holds 3 steps, A 8`` (``side``'s steps, then the other's; None: ``A holds 8
    steps, B 3``), with each one's method when they found their steps differently."""
    own, other = ("B", "A") if side == "B" else ("A", "B")
    counts = {"A": ends.steps_a, "B": ends.steps_b}
    methods = {"A": ends.method_a, "B": ends.method_b}
    by = (lambda s: f" by {methods[s]}") if ends.method_a != ends.method_b else (lambda s: "")
    steps = "step" if counts[own] == 1 else "steps"
    who = "it" if side else own
    return f"{who} holds {counts[own]:,} {steps}{by(own)}, {other} {counts[other]:,}{by(other)}"


def _summary(diff: PathDiff) -> str:
    from ..views import plural

    f = diff.figures
    danger = f["danger_added"]
    return (
        f"{plural(f['variant_changed'], 'kernel-variant change')}, "
        f"{plural(f['config_changed'], 'launch-configuration-only change')}, "
        f"{plural(f['launches_added'], 'launch', 'launches')} added, "
        f"{f['launches_removed']:,} removed{_reorders(f)}; {danger:,} "
        f"{'brings' if danger == 1 else 'bring'} a new danger rule"
    )


def _moved(diff: PathDiff) -> list[str]:
    """The line on launches that only changed device (PathDiff.moved), when some."""
    if not diff.moved:
        return []
    n = diff.figures.get("launches_moved", 0)
    return [
        f"devices: {diff.devices}: {n:,} launch{'es' if n != 1 else ''} run on another device, "
        "the same kernels as often with the same launch configurations in each region and "
        "step (the same math elsewhere: not a path change; gate on launches_moved)"
    ]


def _reorders(f: dict[str, int]) -> str:
    """The summary's launch-order changes, only when there are some (the boards without
    them read as they always have)."""
    n = f.get("order_changed", 0)
    orders = "launch order" if n == 1 else "launch orders"
    return f", {n:,} {orders} changed (the same kernels as often)" if n else ""


def headline(diff: PathDiff, a: str, b: str) -> tuple[list[str], str]:
    """(the board's first lines: why the path is not measured or may be of another
    program, the verdict, and the launches that only changed device; how its counts are
    qualified: "numerical path:", "over the listed kernels:", ...). The note follows."""
    f = diff.figures
    unsure, head = _unsure(diff)
    if diff.identical:
        how = " over the launches both captures hold" if diff.capture else " exactly"
        verb = "follows"
        if diff.moved:  # the same launches, some of them on another device
            verb = "runs the launches of"
            how = f"{how.removeprefix(' exactly')}, placed on other devices"
        regions = f["regions_compared"]
        verdict = f"{head} {b} {verb} {a}{how} ({regions:,} region{'' if regions == 1 else 's'})"
    else:
        verdict = (
            f"{head} {b} differs from {a} in {f['regions_changed']:,} of "
            f"{f['regions_compared']:,} regions"
        )
    return [*unsure, verdict, *_moved(diff)], head


def _unsure(diff: PathDiff) -> tuple[list[str], str]:
    """(the lines that say the path is not measured, or may be another program's; the
    verdict's opening)."""
    # A path not recorded (graph replays traced at graph level) is no changed path: the
    # board says so first, and what follows is only over the kernels the exports list.
    unsure = (
        [
            f"numerical path: not measured: {diff.unrecorded}; below, only the kernels the "
            "exports list are compared, and a kernel added or removed may have run inside "
            "the replays"
        ]
        if diff.unrecorded
        else []
    )
    head = "over the listed kernels:" if unsure else "numerical path:"
    if diff.unannotated and not unsure:  # the regions of one are none of the other's
        unsure = [
            f"numerical path: not measured: {diff.unannotated}; below, the regions as each "
            "capture has them"
        ]
        head = "over the regions as each capture has them:"
    if diff.unrelated:  # first: nothing below holds if they are not one program
        unsure = [f"numerical path: {diff.unrelated}", *unsure]
        if head == "numerical path:":
            head = "compared as one program:"
    return unsure, head


def lines(diff: PathDiff, a: str, b: str, *, top: int | None = 10) -> list[str]:
    """The board as lines: verdict, first divergence, first change of math, then every
    changed region (consecutive regions with the same changes as one group), ``top``
    groups at most (None: all): its kernel-variant changes, added and removed kernels one
    per line, and its launch-configuration-only changes on one line (their detail is in
    the JSON)."""
    note = [f"note: {diff.note}"] if diff.note else []
    nvtx = diff.nvtx_regions
    opening, head = headline(diff, a, b)
    if diff.identical:
        return [*opening, *note]
    out = [*opening, *note, f"first divergence: {divergence_text(diff.first, nvtx)}"]
    if diff.first_math is not None and diff.first_math != diff.first:
        out.append(f"first change of math: {divergence_text(diff.first_math, nvtx)}")
    # Under a path not measured the counts are the listed kernels' only (as the line above).
    over = head.startswith("over ")  # the counts of a part only (not of another program)
    changes = f"changes {head.removesuffix(':')}" if over else "changes"
    out += [f"{changes}: {_summary(diff)}", "", "changed regions:"]
    groups = diff.grouped()
    for regions, first in groups[: top if top else None]:
        out += _group_lines(regions, first, nvtx, top)
    if top and len(groups) > top:
        out.append(f"  … {len(groups) - top} more groups of regions (--top 0 for all)")
    return out


def _group_lines(regions, head, nvtx: bool, top: int | None) -> list[str]:
    """One group of alike changed regions: where, then its changes (``top``: the counted
    changes past the listed launches shown, None: all)."""
    names = region_label(head.region, bool(head.steps), nvtx)
    if len(regions) > 1:
        last = region_label(regions[-1].region, bool(head.steps), nvtx)
        names += f" … {last} ({len(regions)} regions alike)"
    status = {"added": " (only in B)", "removed": " (only in A)"}.get(head.status, "")
    if head.same_as is not None:  # a replica: the other side's device runs it all
        other = "A" if head.status == "added" else "B"
        status = f"{status[:-1]}: the same launches as device {head.same_as} in {other})"
    out = [f"  device {head.device}, {names}{_steps(head.steps)}{status}"]
    out += [f"    {line}" for line in _listed_lines(head.changes, top)]
    if head.unlisted:
        out.append(f"    {'unlisted':<8}       {head.unlisted}")
    out += [f"    {line}" for line in counted_lines(head.counted, top)]
    return out


def _listed_lines(changes, top: int | None) -> list[str]:
    """A region's changes of its listed launches, one per line in launch order, ``top`` at
    most (None: all; a whole added device lists thousands), then its launch-configuration-
    only changes on one line (their positions, ``top`` at most)."""
    math = sorted(
        (c for c in changes if c.kind != CONFIG), key=lambda c: (_ORDER[c.kind], c.position)
    )
    out = [
        f"{_KIND_LABEL[c.kind]:<8} #{c.position:<4} {change_text(c, verb=False)}"
        for c in math[: top if top else None]
    ]
    if top and len(math) > top:
        rest = Counter(_KIND_LABEL[c.kind] for c in math[top:])
        kinds = ", ".join(f"{n:,} {kind}" for kind, n in rest.items())
        out.append(f"… {len(math) - top:,} more listed changes ({kinds}; --top 0 or -f json)")
    configs = [c.position for c in changes if c.kind == CONFIG]
    if configs:
        where = ", ".join(f"#{p}" for p in configs[: top if top else None])
        if top and len(configs) > top:
            where += f", … {len(configs) - top:,} more"
        out.append(
            f"{'config':<8} {len(configs):,} kernels kept, with another grid or block: {where}"
        )
    return out


def counted_lines(counted: tuple[CountedChange, ...], top: int | None = 10) -> list[str]:
    """The changes counted past the listed launches (fingerprint.counted), the most
    launches first, ``top`` at most (None: all): ``added   ×1,245,904 X``."""
    if not counted:
        return []
    ranked = sorted(counted, key=lambda c: (-c.launches, _ORDER[c.kind]))
    out = [
        f"{_KIND_LABEL[c.kind]:<8} ×{c.launches:<4,} {counted_text(c)}"
        for c in ranked[: top if top else None]
    ]
    if top and len(ranked) > top:
        rest = sum(c.launches for c in ranked[top:])
        out.append(f"… {len(ranked) - top} more counted changes ({rest:,} launches; -f json)")
    return ["past the listed launches, by variant counts:", *out]


def counted_text(c: CountedChange) -> str:
    """One counted change in words (:func:`change_text`'s, without a position)."""
    if c.kind == ORDER:
        return "the same variants as often, in another order"
    return change_text(KernelChange(c.kind, 0, c.a, c.b, c.danger, c.danger_new), verb=False)


def text(diff: PathDiff, a: str, b: str, *, top: int | None = 10) -> str:
    return "\n".join(_printable_lines(diff, a, b, top)) + "\n"


def markdown(diff: PathDiff, a: str, b: str, *, top: int | None = 10) -> str:
    body = _printable_lines(diff, a, b, top)
    return "\n".join(["```text", *body, "```"]) + "\n"


def _printable_lines(diff: PathDiff, a: str, b: str, top: int | None) -> list[str]:
    """The board's lines with the control characters of file names and NVTX labels (a line
    break too) as ``\\xNN``, as every other board shows them: one split the board's lines."""
    from ..escape import printable

    return [printable(line) for line in lines(diff, a, b, top=top)]


def to_json(diff: PathDiff, a: str, b: str) -> str:
    return json.dumps({"a": a, "b": b, **diff.to_dict()}, indent=1, ensure_ascii=False) + "\n"
