"""How two stretches of launch tokens match, for :mod:`.align`: exactly (``difflib``, an
edit script) with a capture started later or cut short at either end set apart, as
multisets (by counts), or in proportional windows, exactly while a budget lasts and by
counts after that; :class:`Tally` holds what they found.

Bound: the exact alignments cost the product of the lengths (the caller bounds it); the
windows at most ``WINDOW_BUDGET`` token pairs, the rest one vectorized pass (polars).
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

# Windows of this many launches per side...
WINDOW = 1_000
# ...aligned exactly until this many token pairs were compared in all, then by counts.
WINDOW_BUDGET = 5_000_000
# A capture is cut short after a path change only when at least this many of its last
# launches match the other's in order: one or two alike by chance end no capture.
CUT_MATCHED = 8


@dataclass
class Tally:
    """What an alignment found, in launches."""

    matched: int = 0
    first: int | None = None  # 0-based, in A
    first_b: int | None = None
    replaced: Counter | None = None
    only_a: Counter | None = None
    only_b: Counter | None = None
    approximate: bool = False
    # The first launches of one side before the start of the other's capture, and the last
    # past its end (:func:`cut_captures`)
    before_start_a: int = 0
    before_start_b: int = 0
    past_end_a: int = 0
    past_end_b: int = 0
    changes: list | None = None  # (1-based position in A, token A or None, token B or None)

    def __post_init__(self) -> None:
        self.replaced = Counter()
        self.only_a = Counter()
        self.only_b = Counter()
        self.changes = []

    def diverge(self, i: int, j: int) -> None:
        if self.first is None:
            self.first, self.first_b = i, j


def exact(
    a: list[int],
    b: list[int],
    offset_a: int,
    offset_b: int,
    tally: Tally,
    limit: int = 0,
    cuts: tuple[bool, bool] = (False, False),
) -> None:
    """difflib on two (small) token lists; positions are offset into the whole sequences.
    With ``limit``, lists whose product of lengths exceeds ``limit**2`` go by counts.
    ``cuts``: whether the lists start and end where the sequences do (no common prefix,
    suffix): a capture may be cut short there (:func:`cut_captures`)."""
    if limit and len(a) * len(b) > limit * limit:
        by_counts(a, b, offset_a, offset_b, tally)
        return
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    tally.matched += sum(block.size for block in matcher.get_matching_blocks())
    for tag, i1, i2, j1, j2 in cut_captures(matcher.get_opcodes(), tally, *cuts):
        if tag == "equal":
            continue
        tally.diverge(offset_a + i1, offset_b + j1)
        for k in range(max(i2 - i1, j2 - j1)):
            x = a[i1 + k] if i1 + k < i2 else None
            y = b[j1 + k] if j1 + k < j2 else None
            if x is not None and y is not None:
                tally.replaced[(x, y)] += 1
            elif x is not None:
                tally.only_a[x] += 1
            else:
                tally.only_b[y] += 1
            if len(tally.changes) < 10:
                tally.changes.append((offset_a + i1 + k + 1, x, y))


def cut_captures(opcodes: list, tally: Tally, starts: bool, ends: bool) -> list:
    """The edit script (difflib opcodes) without the ends one capture holds beyond the
    other's: launches only one side holds before the other's first ``CUT_MATCHED``
    launches, which match in order (``starts``: the lists start where the sequences do),
    are before the start of the other's capture, and those after its last ones past its
    end (``ends``): a capture started later or cut short, not launches its run left out,
    in no other count (:func:`.captures.part_of` says the same of a sequence without a change
    between). The first divergence is then the first change after a later start."""

    def cut(edge: tuple, matched: tuple) -> bool:
        return edge[0] in ("delete", "insert") and matched[2] - matched[1] >= CUT_MATCHED

    head = starts and len(opcodes) > 1 and cut(opcodes[0], opcodes[1])
    tail = ends and len(opcodes) > 1 and cut(opcodes[-1], opcodes[-2])
    if sum(op[0] != "equal" for op in opcodes) <= head + tail:
        return opcodes  # no change but the cuts: one is a part of the other
    if tail:
        _tag, i1, i2, j1, j2 = opcodes.pop()
        tally.past_end_a, tally.past_end_b = i2 - i1, j2 - j1
    if head:
        _tag, i1, i2, j1, j2 = opcodes.pop(0)
        tally.before_start_a, tally.before_start_b = i2 - i1, j2 - j1
        tally.first = tally.first_b = None
    return opcodes


def by_counts(a: list[int], b: list[int], offset_a: int, offset_b: int, tally: Tally) -> None:
    """Two stretches compared as multisets: an upper bound on what matches in order (the
    motifs of :func:`.align._periodic` when long; :func:`windows_by_counts` is its vectorized
    form for many windows)."""
    ca, cb = Counter(a), Counter(b)
    common = ca & cb
    tally.matched += sum(common.values())
    if ca != cb or a != b:
        tally.diverge(offset_a, offset_b)
        tally.only_a.update(ca - cb)
        tally.only_b.update(cb - ca)
        tally.approximate = True


def windows(a: pl.Series, b: pl.Series, offset_a: int, offset_b: int, tally: Tally) -> None:
    """Long differing stretches: proportional windows, aligned exactly in order until the
    budget is spent, the rest compared by counts all at once (:func:`windows_by_counts`)."""
    n = max(1, -(-max(len(a), len(b)) // WINDOW))
    budget = WINDOW_BUDGET
    k = 0
    while k < n:
        a0, a1 = len(a) * k // n, len(a) * (k + 1) // n
        b0, b1 = len(b) * k // n, len(b) * (k + 1) // n
        wa, wb = a.slice(a0, a1 - a0).to_list(), b.slice(b0, b1 - b0).to_list()
        if wa == wb:
            tally.matched += len(wa)
        elif len(wa) * len(wb) <= budget:
            budget -= len(wa) * len(wb)
            exact(wa, wb, offset_a + a0, offset_b + b0, tally)
        else:
            break
        k += 1
    if k < n:
        windows_by_counts(a, b, n, k, tally)
    tally.approximate = True


def window_counts(seq: pl.Series, n: int, first: int, vocabulary: int) -> pl.DataFrame:
    """How often each token occurs in each of ``n`` proportional windows of ``seq`` (window
    ``k`` holds positions ``len * k // n`` up to ``len * (k + 1) // n``), windows before
    ``first`` left out: one row per (window, token) as ``key = window * vocabulary +
    token`` (one integer key groups faster than two columns) and its count ``n``."""
    import polars as pl

    size = len(seq)
    if size == 0:
        return pl.DataFrame({"key": [], "n": []}, schema={"key": pl.Int64, "n": pl.Int64})
    # the largest k with size * k // n <= i, i.e. size * k < (i + 1) * n
    window = ((pl.int_range(0, size, dtype=pl.Int64) + 1) * n - 1) // size
    keys = (
        pl.DataFrame({"token": seq.cast(pl.Int64)})
        .select(key=window * vocabulary + pl.col("token"), window=window)
        .filter(pl.col("window") >= first)
        .get_column("key")
    )
    return keys.value_counts(name="n").with_columns(pl.col("n").cast(pl.Int64))


def windows_by_counts(a: pl.Series, b: pl.Series, n: int, first: int, tally: Tally) -> None:
    """Windows ``first`` .. ``n - 1`` of :func:`windows` compared as multisets, all in one
    vectorized pass: per window, the launches both have of each kernel (an upper bound on
    what matches in order) and what only one side has. The divergence is already known:
    the windows start at it."""
    import polars as pl

    vocabulary = int(max(a.max() or 0, b.max() or 0)) + 1
    counts = (
        window_counts(a, n, first, vocabulary)
        .join(
            window_counts(b, n, first, vocabulary).rename({"n": "n_b"}),
            on="key",
            how="full",
            coalesce=True,
        )
        .fill_null(0)
    )
    tally.matched += int(counts.select(pl.min_horizontal("n", "n_b").sum()).item() or 0)
    # by token: the tallies list kernels of equal counts in the order they were counted
    # (Counter.most_common), and a group-by's order varies from run to run (the diff of two
    # shared traces listed its tied kernels in 5 orders in 5 runs: test_parity_diff)
    extra = (
        counts.group_by(token=pl.col("key") % vocabulary)
        .agg(
            only_a=(pl.col("n") - pl.col("n_b")).clip(lower_bound=0).sum(),
            only_b=(pl.col("n_b") - pl.col("n")).clip(lower_bound=0).sum(),
        )
        .sort("token")
    )
    for token, only_a, only_b in extra.iter_rows():
        if only_a:
            tally.only_a[token] += only_a
        if only_b:
            tally.only_b[token] += only_b
