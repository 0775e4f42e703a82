"""Aligning two launch sequences of a fingerprint unit: the changes between them, by a
minimal edit script on kernel names (Myers), by difflib past _EDITS_MAX edits, and window by
window past _EXACT_PAIRS launch pairs. A kernel that kept its name but not its grid is a
launch-configuration change, a different name in the same slot a variant change, what is
left over was added or removed. The work is charged to the comparison's budget
(:mod:`tracelens.fingerprint.budget`)."""

from __future__ import annotations

import difflib
from collections import Counter
from functools import cache

from . import budget
from .model import ADDED, CONFIG, REMOVED, VARIANT, Kernel, KernelChange


def _change(kind: str, position: int, a: Kernel | None, b: Kernel | None) -> KernelChange:
    """One change; its ``danger_new``: the determinism risks B's kernel brings where A ran
    another kernel (a variant) or none (added), :func:`risky_rules`. Not the rules A's
    kernel lacked: a split-K GEMM that replaced another split-K GEMM (or cascade
    attention's merge that replaced a split-KV combine) fires the same rule, yet sums in
    another order than A did there, so the result differs all the same (the demo's whole
    story counted 0 that way)."""
    new = b if b is not None else a
    brought = risky_rules(new.danger) if kind in (VARIANT, ADDED) else ()
    return KernelChange(kind, position, a, b, new.danger, brought)


#: The danger levels a change counts as bringing a determinism risk (``danger_added``):
#: those ``tracelens diff`` counts in ``new_danger``. An ``info`` rule (cuBLAS's nvjet
#: heuristic: every nvjet GEMM) says where to look, not that the sum is ordered otherwise;
#: counted, nearly every GEMM variant change of a batch-size change would be one.
RISK_LEVELS = ("high", "medium")


def risky_rules(rules: tuple[str, ...]) -> tuple[str, ...]:
    """Those of ``rules`` (danger rule ids) at a :data:`RISK_LEVELS` level; an id the
    built-in rules do not know (a user's rule, from the document) counts."""
    if not rules:
        return ()
    levels = _rule_levels()
    return tuple(r for r in rules if levels.get(r, RISK_LEVELS[0]) in RISK_LEVELS)


@cache
def _rule_levels() -> dict[str, str]:
    from ..danger import load_danger_rules

    return {r.id: r.level for r in load_danger_rules().rules}


def _align(a: list[Kernel], b: list[Kernel], i0: int, j0: int, key) -> list[KernelChange]:
    """Changes between a and b (slices starting at positions i0, j0), aligned on ``key``:
    first the name, then, inside a replaced stretch, the family (so a GEMM is paired with
    the GEMM that replaced it, not with the copy next to it). Names by a minimal edit
    script; families by difflib: a replaced stretch is short and shares no name, and
    there difflib's pairing is the one the boards have always shown (an edit script pairs
    as many launches, but sometimes others)."""
    keys = ([key(k) for k in a], [key(k) for k in b])
    blocks = _matching_blocks(*keys) if key is _by_name else None
    return _block_changes(a, b, i0, j0, key, blocks or _difflib_blocks(*keys))


def _block_changes(a, b, i0: int, j0: int, key, blocks) -> list[KernelChange]:
    """The changes of an alignment given as matching blocks (i, j, size), the last (len(a),
    len(b), 0): slots in a block share the key; what lies between two blocks is replaced
    (both sides have launches there), removed (only a's) or added (only b's)."""
    out: list[KernelChange] = []
    i = j = 0
    for bi, bj, size in blocks:
        if i < bi and j < bj and key is _by_name:
            out.extend(_align(a[i:bi], b[j:bj], i0 + i, j0 + j, _by_family))
        else:
            paired = min(bi - i, bj - j)
            for k in range(paired):
                out.append(_change(VARIANT, j0 + j + k + 1, a[i + k], b[j + k]))
            out.extend(_change(REMOVED, i0 + x + 1, a[x], None) for x in range(i + paired, bi))
            out.extend(_change(ADDED, j0 + y + 1, None, b[y]) for y in range(j + paired, bj))
        k = _run(a, b, bi, bj, size)  # the same kernel objects, compared in C
        while k < size:
            x, y = a[bi + k], b[bj + k]
            out.append(_change(CONFIG if x.name == y.name else VARIANT, j0 + bj + k + 1, x, y))
            k += 1 + _run(a, b, bi + k + 1, bj + k + 1, size - k - 1)
        i, j = bi + size, bj + size
    return out


def _by_name(k: Kernel) -> str:
    return k.name


def _by_family(k: Kernel) -> str:
    return k.family


# At most this many launches added or removed (a replaced launch is one of each) in one
# minimal edit script (_edit_script): its work is about _EDITS_MAX² steps in Python plus at
# most (2 _EDITS_MAX + 1) · (len(a) + len(b)) slot comparisons in C, its memory about
# _EDITS_MAX² integers. Measured at the bound (1,000: two shuffles of the same 4,000 or 1M
# launches, which the count check cannot rule out): about 1 CPU s and 20 MB before giving
# up; a 1M-launch pair with 10 changes takes 0.12 CPU s in all. Past it (runs that differ
# almost everywhere) difflib aligns them, in one match or window by window.
_EDITS_MAX = 1_000
# Sequences up to this many launch pairs (len(a) * len(b)) are aligned by one difflib match,
# whose work grows with that product: a unit's listed launches always are (block_launches,
# 4,096 each: 16.8M pairs at most). Longer ones, a region's launches over all its steps when
# the two runs' steps differ, are aligned window by window (_align_windows).
_EXACT_PAIRS = 20_000_000
# Launches of each side in one window of _align_windows.
_WINDOW = 512


def _sequence_changes(a: list[Kernel], b: list[Kernel]) -> list[KernelChange]:
    """Changes between two launch sequences: a minimal edit script on names when they
    differ in at most _EDITS_MAX launches, else difflib (by windows past _EXACT_PAIRS)."""
    blocks = _matching_blocks([k.name for k in a], [k.name for k in b])
    if blocks is not None:
        return _block_changes(a, b, 0, 0, _by_name, blocks)
    if len(a) * len(b) <= _EXACT_PAIRS:
        return _align(a, b, 0, 0, _by_name)
    return _align_windows(a, b)


def open_end(a: list[Kernel], b: list[Kernel]) -> tuple[list[KernelChange], int, int]:
    """As :func:`_sequence_changes`, up to the last launch the two sequences share by name
    only: (the changes before it, how many launches of ``a`` and of ``b`` that covers). What
    lies past it is left out (the launches of two lists that end where a longer sequence
    goes on, :mod:`tracelens.fingerprint.listed`). Sequences aligned window by window (past
    _EXACT_PAIRS) are aligned to their ends."""
    keys = ([k.name for k in a], [k.name for k in b])
    blocks = _matching_blocks(*keys)
    if blocks is None:
        if len(a) * len(b) > _EXACT_PAIRS:
            return _align_windows(a, b), len(a), len(b)
        blocks = _difflib_blocks(*keys)
    runs = [block for block in blocks if block[2]]
    i, j = (runs[-1][0] + runs[-1][2], runs[-1][1] + runs[-1][2]) if runs else (0, 0)
    return _block_changes(a[:i], b[:j], 0, 0, _by_name, [*runs, (i, j, 0)]), i, j


def _difflib_blocks(ka: list, kb: list) -> list[tuple[int, int, int]]:
    budget.spend(len(ka) * len(kb) // budget.DIFFLIB_PAIRS)
    matcher = difflib.SequenceMatcher(None, ka, kb, False)
    return [tuple(m) for m in matcher.get_matching_blocks()]


def _matching_blocks(ka: list, kb: list) -> list[tuple[int, int, int]] | None:
    """The matching blocks (i, j, size; the last (len(ka), len(kb), 0)) of a minimal edit
    script turning ka into kb, or None when it needs more than _EDITS_MAX edits. The
    common prefix is cut first; the common suffix is not: in a repeated program the step
    one run lacks can be placed anywhere at the same cost, and the edit script's forward
    runs put it after the last real change (at the end, where a shorter capture lost
    it), where cutting the suffix would put it next to that change."""
    n, m = len(ka), len(kb)
    head = _run(ka, kb, 0, 0, min(n, m))
    mid_a, mid_b = ka[head:], kb[head:]
    if _lower_bound(mid_a, mid_b) > _EDITS_MAX:
        return None
    middle = _edit_script(mid_a, mid_b) if mid_a or mid_b else []
    if middle is None:
        return None
    # The middle starts with a difference, so no run of it continues the prefix.
    blocks = [(0, 0, head)] if head else []
    blocks += [(i + head, j + head, size) for i, j, size in middle]
    return blocks + [(n, m, 0)]


def _lower_bound(xa: list, xb: list) -> int:
    """Edits any script needs at least: the launches of each key one side has more of."""
    ca, cb = Counter(xa), Counter(xb)
    return sum(abs(ca[k] - cb[k]) for k in ca.keys() | cb.keys())


def _run(xa: list, xb: list, x: int, y: int, most: int) -> int:
    """How many slots from xa[x] and xb[y] (``most`` at most) are equal: slices compared
    in C, in growing then shrinking strides."""
    start, stride = x, 8
    while True:
        size = min(stride, len(xa) - x, len(xb) - y, most - (x - start))
        if size <= 0:
            return x - start
        if xa[x : x + size] == xb[y : y + size]:
            x, y, stride = x + size, y + size, stride * 2
        elif size == 1:
            return x - start
        else:
            stride = size // 2


def _edit_script(xa: list, xb: list) -> list[tuple[int, int, int]] | None:
    """Myers' O((N+M)·D) shortest edit script (E. Myers, "An O(ND) difference algorithm
    and its variations", 1986): the matching blocks of a longest common subsequence, or
    None past _EDITS_MAX edits. Unlike difflib's longest block first, it never pairs a
    step with a step one period away in a repeated program."""
    n, m = len(xa), len(xb)
    off = _EDITS_MAX + 1
    reach = [0] * (2 * off + 1)  # reach[k + off]: furthest x on diagonal k = x - y
    trace: list[list[int]] = []
    for d in range(min(_EDITS_MAX, n + m) + 1):
        budget.spend(d + 1)  # the comparison's budget: a step per diagonal extended
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and reach[k - 1 + off] < reach[k + 1 + off]):
                x = reach[k + 1 + off]  # down: b[y] added
            else:
                x = reach[k - 1 + off] + 1  # right: a[x] removed
            x += _run(xa, xb, x, x - k, n)
            reach[k + off] = x
            if x >= n and x - k >= m:
                trace.append(reach[off - d : off + d + 1])
                return _backtrack(trace, n, m)
        trace.append(reach[off - d : off + d + 1])
    return None


def _backtrack(trace: list[list[int]], n: int, m: int) -> list[tuple[int, int, int]]:
    """The diagonal runs (i, j, size) of the path _edit_script found, first to last.
    ``trace[d]`` holds the furthest x of diagonals -d..d after d edits."""
    blocks = []
    x, y = n, m
    for d in range(len(trace) - 1, 0, -1):
        prev, k = trace[d - 1], x - y
        down = k == -d or (k != d and prev[k - 1 + d - 1] < prev[k + 1 + d - 1])
        pk = k + 1 if down else k - 1
        px = prev[pk + d - 1]
        sx, sy = (px, px - pk + 1) if down else (px + 1, px - pk)
        if x > sx:
            blocks.append((sx, sy, x - sx))
        x, y = px, px - pk
    if x > 0:
        blocks.append((0, 0, x))
    return blocks[::-1]


def _align_windows(a: list[Kernel], b: list[Kernel]) -> list[KernelChange]:
    """Changes between two long sequences, in time linear in their lengths. The common
    prefix and suffix of names are compared slot by slot; what lies between, window by
    window: _WINDOW launches of each side are aligned (:func:`_align`), and the next windows
    start after the last stretch of names the two share past the middle of either window
    (at the windows' ends when there is none), so each window moves on by at least
    _WINDOW / 2 launches on one side. Bound: at most 2 (len(a) + len(b)) / _WINDOW windows,
    each aligned twice at _WINDOW² pairs at most. Exact where the sequences share a name at
    least every _WINDOW / 2 launches (a change inside a step of a repeated program); a
    stretch longer than that with nothing in common may be paired differently than one
    match of the whole would pair it."""
    n = min(len(a), len(b))
    head = next((k for k in range(n) if a[k].name != b[k].name), n)
    tail = 0
    while tail < n - head and a[-1 - tail].name == b[-1 - tail].name:
        tail += 1
    out = _same_names(a, b, 0, 0, head)
    i, j, end_a, end_b = head, head, len(a) - tail, len(b) - tail
    while i < end_a and j < end_b:
        wa, wb = a[i : min(i + _WINDOW, end_a)], b[j : min(j + _WINDOW, end_b)]
        ci, cj = len(wa), len(wb)
        if i + ci < end_a or j + cj < end_b:  # not the last window: cut after a match
            keys = ([k.name for k in wa], [k.name for k in wb])
            blocks = _matching_blocks(*keys) or _difflib_blocks(*keys)
            for bi, bj, size in reversed(blocks[:-1]):
                if bi + size > _WINDOW // 2 or bj + size > _WINDOW // 2:
                    ci, cj = bi + size, bj + size
                    break
        out.extend(_align(wa[:ci], wb[:cj], i, j, _by_name))
        i, j = i + ci, j + cj
    out.extend(_align(a[i:end_a], b[j:end_b], i, j, _by_name))  # what one side has left
    out.extend(_same_names(a, b, end_a, end_b, tail))
    return out


def _same_names(a: list[Kernel], b: list[Kernel], i0: int, j0: int, count: int):
    """Changes of ``count`` slots from a[i0] and b[j0] whose names are the same: another
    launch configuration (or other fields) of the same kernel."""
    return [
        _change(CONFIG, j0 + k + 1, a[i0 + k], b[j0 + k])
        for k in range(count)
        if a[i0 + k] != b[j0 + k]
    ]
