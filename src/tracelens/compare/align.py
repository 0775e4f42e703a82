"""The in-order launch sequences of two runs, aligned per device, in near-linear time.

A launch sequence is a device's kernel launches in the order the host launched them
(correlation id; the kernels of one CUDA graph launch, which share it, in GPU start order:
:func:`tracelens.compare.collect.launch_sequences`), as name tokens: not GPU start order,
in which two streams' kernels interleave as timing has it, differently in two runs of one
program. The alignment tries, cheapest first:

1. identical sequences, or one a prefix, suffix or slice of the other: the captures hold
   different amounts of the same work (a *capture* difference, not a path change);
2. both sequences periodic (a step repeats) with the same step, and one's end the
   other's beginning (two overlapping windows of one launch stream, over at least
   ``MIN_STEPS`` steps; :mod:`.captures`): a capture difference too, the step counts say
   how much of the program each capture holds. The same step alone is not enough: a run
   whose path changes partway repeats A's step until then. Nor is an overlap that matches
   no more launches than the sequences have in place (the common prefix and suffix, or
   the positions equal with their starts or their ends lined up: ``_in_place``): a change
   in one run's first steps reads as such an overlap too; those are aligned as a path
   change (3-5) with the relation ``shifted``: the board says it is unsure;
3. an exact alignment (``difflib``) of what differs after the common prefix and suffix,
   when it is small (at most ``EXACT_PAIRS`` token pairs); a capture that also started
   later or ended earlier is set apart (:func:`.stretches.cut_captures`);
4. both periodic, other steps: the steps' launch motifs are aligned with each other ("in
   every step, launch #k changed X → Y"), each change counted once per step (the same
   step on both sides, and no capture difference: the change is in some steps only, so
   windows);
5. otherwise windows of ``WINDOW`` launches (:mod:`.stretches`), aligned exactly while the
   work budget (``WINDOW_BUDGET`` token pairs in all) lasts and compared by counts after that.

Bound: every step is linear in the launches (vectorized, polars) except the exact alignments, whose
total work is capped at ``EXACT_PAIRS + WINDOW_BUDGET`` token pairs (a few seconds in
the worst case, no periodicity and fully different sequences); the alignment then says it
is approximate (``SequenceAlignment.truncated``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING

from . import stretches
from .captures import overlap, part_of, rotation, startup
from .model import SequenceAlignment
from .period import Period, anchor_token, find_period

if TYPE_CHECKING:
    import polars as pl

    from .collect import Side

# Exact alignment (difflib) of the differing middle when len(A) * len(B) is at most this
# (2,000 x 2,000 launches: under a second even for periodic input).
EXACT_PAIRS = 4_000_000
# Motifs longer than this are compared by counts, not in order.
MOTIF_LIMIT = 20_000


def _common_prefix(a: pl.Series, b: pl.Series) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    differ = (a.head(n) != b.head(n)).arg_true()
    return int(differ[0]) if len(differ) else n


def align_tokens(device: int, a: pl.Series, b: pl.Series, names: list[str]) -> SequenceAlignment:
    """Align two token sequences (Int64 indices into ``names``) of one device."""
    import polars as pl

    same = a is b  # a sequence aligned with itself: its period is found once
    a = pl.Series("a", a, dtype=pl.Int64)
    b = a if same else pl.Series("b", b, dtype=pl.Int64)
    tally = stretches.Tally()
    relation, changes = "identical", []
    period_a = period_b = None
    prefix = _common_prefix(a, b)
    suffix = _common_prefix(a.slice(prefix).reverse(), b.slice(prefix).reverse())
    tally.matched = prefix + suffix
    # Steps (a repeating launch motif) are looked for even in identical sequences: they
    # make impacts "per step".
    anchor = anchor_token(a, b) if len(a) and len(b) else None
    if anchor is not None:
        period_a = find_period(a, anchor)
        period_b = period_a if same else find_period(b, anchor)
    if prefix + suffix < max(len(a), len(b)):
        tally.diverge(prefix, prefix)
        relation, changes = _relation(a, b, prefix, suffix, (period_a, period_b), tally)
    first, first_b = tally.first, tally.first_b

    def name(token: int | None) -> str | None:
        return None if token is None else names[token]

    return SequenceAlignment(
        device=device,
        launches_a=len(a),
        launches_b=len(b),
        aligned=max(len(a), len(b)),
        matched_in_order=min(tally.matched, len(a), len(b)),
        first_divergence=first,
        a_at_divergence=name(a[first]) if first is not None and first < len(a) else None,
        b_at_divergence=name(b[first_b]) if first_b is not None and first_b < len(b) else None,
        replaced=tuple((names[x], names[y], n) for (x, y), n in tally.replaced.most_common(10)),
        only_in_a=tuple((names[x], n) for x, n in tally.only_a.most_common(10)),
        only_in_b=tuple((names[x], n) for x, n in tally.only_b.most_common(10)),
        truncated=tally.approximate,
        relation=relation,
        steps_a=period_a.steps if period_a else None,
        steps_b=period_b.steps if period_b else None,
        step_launches_a=period_a.length if period_a else None,
        step_launches_b=period_b.length if period_b else None,
        step_changes=tuple((pos, name(x), name(y)) for pos, x, y in changes),
        step_first=name(period_a.motif[0]) if changes and period_a else None,
        step_calls=_step_calls(period_a, period_b, names),
        before_start_a=tally.before_start_a,
        before_start_b=tally.before_start_b,
        past_end_a=tally.past_end_a,
        past_end_b=tally.past_end_b,
    )


def _relation(
    a: pl.Series, b: pl.Series, prefix: int, suffix: int, periods: tuple, tally: stretches.Tally
) -> tuple[str, list]:
    """How two sequences that differ past their common ``prefix`` and ``suffix`` relate, the
    cheapest reading first (the module's list): a part of the other, or it with launches
    left out at one place; two windows of one run (``periods``: A's and B's); else a path
    change (:func:`_path`). Tallies the launches; returns the relation and step changes."""
    period_a, period_b = periods
    mid_a = a.slice(prefix, len(a) - suffix - prefix)
    mid_b = b.slice(prefix, len(b) - suffix - prefix)
    short, long = (b, a) if len(b) <= len(a) else (a, b)
    if (offset := part_of(short, long)) is not None:
        # One capture holds a contiguous part of the other's launches.
        relation = "prefix" if offset == 0 else "slice"
        relation = "suffix" if offset == len(long) - len(short) else relation
        tally.matched = len(short)
        rest = long.head(offset).to_list() + long.slice(offset + len(short)).to_list()
        (tally.only_a if long is a else tally.only_b).update(rest)
        return relation, []
    if not len(mid_a) or not len(mid_b):
        # One sequence is the other with launches left out at one place.
        extra = tally.only_a if len(mid_a) else tally.only_b
        extra.update((mid_a if len(mid_a) else mid_b).to_list())
        return "subsequence", []
    # The same step on both sides (the motifs may start at other launches of it: a warm-up
    # step of another length shifts where the period search cuts the steps).
    same_step = bool(period_a and period_b and rotation(period_a.motif, period_b.motif))
    shared = overlap(a, b, period_a.length) if same_step else None
    if shared is not None and not startup(a if shared > 0 else b, abs(shared), period_a.motif):
        shared = None  # steps, then a change: no start-up but a path change
    if shared is not None and abs(shared) > _in_place(a, b, prefix, suffix):
        # Two windows of one launch stream: one capture started and ended later. Only when
        # the overlap matches more launches than the same start or end do: else a change in
        # one run's first steps (the rest alike, one run maybe cut short) would read as the
        # earlier capture's own.
        _overlapping(a, b, shared, tally)
        return "capture", []
    relation, changes = _path(a, b, prefix, suffix, period_a, period_b, tally)
    # Aligned as a path change, but the captures could as well be windows of one run from
    # other points: the board says it is unsure.
    return ("shifted" if shared is not None else relation), changes


def _in_place(a: pl.Series, b: pl.Series, prefix: int, suffix: int) -> int:
    """How many launches the two sequences have in common in place: the common prefix and
    suffix (the same start and end), or the positions equal when their starts line up (B
    maybe cut short), or their ends. Two vectorized passes."""
    n = min(len(a), len(b))
    same_start = int((a.head(n) == b.head(n)).sum())
    same_end = int((a.tail(n) == b.tail(n)).sum())
    return max(prefix + suffix, same_start, same_end)


def _path(
    a: pl.Series,
    b: pl.Series,
    prefix: int,
    suffix: int,
    period_a: Period | None,
    period_b: Period | None,
    tally: stretches.Tally,
) -> tuple[str, list]:
    """Two sequences that differ past their common ``prefix`` and ``suffix`` on a path:
    the middle aligned exactly when small, motif by motif when both repeat other steps,
    else in windows. Returns the relation and the changes within one step."""
    mid_a = a.slice(prefix, len(a) - suffix - prefix)
    mid_b = b.slice(prefix, len(b) - suffix - prefix)
    same_step = bool(period_a and period_b and rotation(period_a.motif, period_b.motif))
    if len(mid_a) * len(mid_b) <= EXACT_PAIRS:
        stretches.exact(
            mid_a.to_list(), mid_b.to_list(), prefix, prefix, tally, cuts=(not prefix, not suffix)
        )
        changes = []
        if period_a and period_b and not same_step:
            changes = _periodic(period_a, period_b, stretches.Tally())
        return "aligned", changes
    if period_a and period_b and not same_step:
        return "periodic", _periodic(period_a, period_b, tally, prefix + suffix)
    stretches.windows(mid_a, mid_b, prefix, prefix, tally)
    return "windows", []


def _overlapping(a: pl.Series, b: pl.Series, overlap: int, tally: stretches.Tally) -> None:
    """Two captures that overlap by ``overlap`` launches (:func:`~.captures.overlap`): those match in
    order; what only one holds, before or after them, is that capture's alone."""
    k = abs(overlap)
    early, late = (a, b) if overlap > 0 else (b, a)
    tally.matched = k
    (tally.only_a if early is a else tally.only_b).update(early.head(len(early) - k).to_list())
    (tally.only_b if late is b else tally.only_a).update(late.slice(k).to_list())


def _periodic(pa: Period, pb: Period, tally: stretches.Tally, outside: int = 0) -> list:
    """Both sequences repeat a step, and the steps differ: the motifs are aligned with each
    other, and each difference counts once per step both runs make (``outside``: launches
    known to match beyond the steps). Returns the changes within one step."""
    step = stretches.Tally()
    stretches.exact(pa.motif, pb.motif, 0, 0, step, limit=MOTIF_LIMIT)
    steps = min(pa.steady, pb.steady)
    tally.matched = outside + steps * step.matched
    for counter, per_step in (
        (tally.replaced, step.replaced),
        (tally.only_a, step.only_a),
        (tally.only_b, step.only_b),
    ):
        for key, n in per_step.items():
            counter[key] += n * steps
    tally.approximate = True
    return step.changes


def _step_calls(pa: Period | None, pb: Period | None, names) -> tuple[tuple[str, int, int], ...]:
    """Kernels whose launches per step differ between the two motifs: (name, A, B)."""
    if pa is None or pb is None:
        return ()
    ca, cb = Counter(pa.motif), Counter(pb.motif)
    return tuple(
        sorted(
            ((names[t], ca[t], cb[t]) for t in set(ca) | set(cb) if ca[t] != cb[t]),
            key=lambda r: (-abs(r[2] - r[1]), r[0]),
        )
    )


def align_sequences(device: int, a: list[str], b: list[str]) -> SequenceAlignment:
    """Align two launch sequences given as kernel names (a convenience over
    ``align_tokens``)."""
    ids: dict[str, int] = {}
    ta = [ids.setdefault(n, len(ids)) for n in a]
    tb = [ids.setdefault(n, len(ids)) for n in b]
    return align_tokens(device, ta, tb, list(ids))


def align_devices(sa: Side, sb: Side) -> tuple[SequenceAlignment, ...]:
    """Every device either side launched on, aligned with its partner on the other side
    (:func:`pair_devices`; ``device_b`` says B's device when it is not the same ordinal);
    a device without a partner is aligned with nothing. Tokens shared by kernel name."""
    import polars as pl

    vocabulary: dict[str, int] = {}
    for side in (sa, sb):
        for n in side.sequence_names:
            vocabulary.setdefault(n, len(vocabulary))
    names = list(vocabulary)
    empty = pl.Series([], dtype=pl.Int64)

    def tokens(side: Side) -> dict[int, pl.Series]:
        remap = pl.Series([vocabulary[n] for n in side.sequence_names], dtype=pl.Int64)
        return {device: remap.gather(local) for device, local in side.sequences.items()}

    ta = tokens(sa)
    tb = ta if sb is sa else tokens(sb)  # one read compared with itself: the same tokens
    pairs = pair_devices(ta, tb)
    out = []
    for da, db in pairs:
        al = align_tokens(da, ta[da], tb[db], names)
        out.append(al if da == db else replace(al, device_b=db))
    paired_a, paired_b = {da for da, _ in pairs}, {db for _, db in pairs}
    # Paired by what they run: a device one run alone launched on says which run it is.
    by_number = all(da == db for da, db in pairs)
    out += [
        replace(align_tokens(d, ta[d], empty, names), only=None if by_number else "A")
        for d in ta
        if d not in paired_a
    ]
    out += [
        replace(align_tokens(d, empty, tb[d], names), only=None if by_number else "B")
        for d in tb
        if d not in paired_b
    ]
    return tuple(sorted(out, key=lambda al: (al.device, al.device_b is not None)))


# Devices are paired by what they launch when that beats pairing them by ordinal by at least
# this share of the launches (of the side with more): GPUs of a data-parallel job launch
# nearly the same kernels, and a permutation that matches a few more launches by chance
# must not reorder them; a renumbered GPU (CUDA_VISIBLE_DEVICES, another node's ordinals)
# that runs other work than the same ordinal of the other run beats it by far more.
PAIRING_GAIN = 0.1


def pair_devices(a: dict[int, pl.Series], b: dict[int, pl.Series]) -> list[tuple[int, int]]:
    """Which device of A is compared with which of B, from each device's launches (token
    sequences). The similarity of two devices is the launches they have in common by
    kernel (the sum over kernels of the smaller launch count). Two pairings compete:

    * by ordinal: each device with the same device of the other run, or, when each run
      launched on one device only, those two (two ranks of one job on their own GPUs);
    * by what runs: greedy, the most similar pair first (ties: the same ordinal first,
      then the lowest device of A, then of B), until one side has no device left.

    The second wins when its pairs have at least :data:`PAIRING_GAIN` of the launches (of
    the side with more) more in common. Cost: one count per device and kernel, and one
    comparison per pair of devices, vectorized."""
    if len(a) == 1 and len(b) == 1:
        return [(next(iter(a)), next(iter(b)))]
    by_ordinal = [(d, d) for d in sorted(a) if d in b]
    if not a or not b or a is b:
        # The same sequences on both sides: by ordinal, each device has all its launches
        # in common, as many as any pairing can have, so pairing by work gains nothing.
        return by_ordinal
    common = common_launches(a, b)
    ranked = sorted(common, key=lambda p: (-common[p], p[0] != p[1], p[0], p[1]))
    by_work: list[tuple[int, int]] = []
    used_a: set[int] = set()
    used_b: set[int] = set()
    for da, db in ranked:
        if da not in used_a and db not in used_b:
            by_work.append((da, db))
            used_a.add(da)
            used_b.add(db)
    launches = max(sum(len(s) for s in a.values()), sum(len(s) for s in b.values()))
    gain = sum(common[p] for p in by_work) - sum(common.get(p, 0) for p in by_ordinal)
    if gain >= PAIRING_GAIN * launches and gain > 0:
        return sorted(by_work)
    return by_ordinal


def common_launches(a: dict[int, pl.Series], b: dict[int, pl.Series]) -> dict[tuple[int, int], int]:
    """For every device of A and every device of B: the launches they have in common by
    kernel (sum over kernels of the smaller count; 0 when they share no kernel)."""
    import polars as pl

    def counts(side: dict[int, pl.Series]) -> pl.DataFrame:
        return pl.concat(
            [
                pl.DataFrame({"token": seq.cast(pl.Int64)})
                .group_by("token")
                .agg(n=pl.len().cast(pl.Int64))
                .with_columns(device=pl.lit(device, pl.Int64))
                for device, seq in side.items()
            ]
        )

    shared = (
        counts(a)
        .join(counts(b), on="token", suffix="_b")
        .group_by("device", "device_b")
        .agg(pl.min_horizontal("n", "n_b").sum().alias("common"))
    )
    common = {(da, db): 0 for da in a for db in b}
    common.update({(da, db): int(n) for da, db, n in shared.iter_rows()})
    return common
