"""The diff's launch-sequence alignment past its exact budget: windows compared by counts,
all at once, must say what a window-by-window count would (compare/stretches.py)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from tracelens.compare import align, stretches


def _by_windows(a, b, window, budget_windows):
    """Reference: the proportional windows of stretches.windows, each compared with a Counter;
    the first ``budget_windows`` that differ are aligned exactly (not compared here: the
    cases below keep those identical or give them no budget)."""
    n = max(1, -(-max(len(a), len(b)) // window))
    matched, only_a, only_b, first = 0, Counter(), Counter(), None
    for k in range(n):
        wa = a[len(a) * k // n : len(a) * (k + 1) // n]
        wb = b[len(b) * k // n : len(b) * (k + 1) // n]
        ca, cb = Counter(wa), Counter(wb)
        matched += sum((ca & cb).values())
        only_a.update(ca - cb)
        only_b.update(cb - ca)
        if wa != wb and first is None:
            first = (len(a) * k // n, len(b) * k // n)
    return matched, only_a, only_b, first


def _edited(rng, seq, edits, vocabulary):
    out = list(seq)
    for _ in range(edits):
        i = rng.randrange(len(out))
        op = rng.randrange(3)
        if op == 0:
            out[i] = rng.randrange(vocabulary)
        elif op == 1:
            out.insert(i, rng.randrange(vocabulary))
        else:
            del out[i]
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_windows_by_counts_agree_with_a_counter_per_window(monkeypatch, seed):
    monkeypatch.setattr(stretches, "WINDOW", 50)
    monkeypatch.setattr(stretches, "WINDOW_BUDGET", 0)  # every differing window by counts
    monkeypatch.setattr(align, "EXACT_PAIRS", 0)
    rng = random.Random(seed)
    vocabulary = 8  # with the two edge tokens, 10: every count fits in the top 10
    a = [rng.randrange(vocabulary) for _ in range(2_000 + seed * 37)]
    b = _edited(rng, a, 40, vocabulary)
    b[0] = vocabulary  # no common prefix: the windows start at launch 0
    a[-1] = vocabulary + 1  # nor a common suffix
    names = [str(i) for i in range(vocabulary + 2)]
    al = align.align_tokens(0, a, b, names)
    assert al.relation == "windows" and al.truncated
    matched, only_a, only_b, first = _by_windows(a, b, 50, 0)
    assert al.matched_in_order == matched
    assert dict(al.only_in_a) == {names[t]: n for t, n in only_a.items()}
    assert dict(al.only_in_b) == {names[t]: n for t, n in only_b.items()}
    assert al.first_divergence == first[0] == 0


def test_a_reordered_window_past_the_budget_counts_as_matched_launches(monkeypatch):
    """By counts, a window that holds the same kernels in another order matches whole (an
    upper bound, so the alignment says it is approximate); the divergence stays where the
    sequences first differ."""
    monkeypatch.setattr(stretches, "WINDOW", 10)
    monkeypatch.setattr(stretches, "WINDOW_BUDGET", 0)
    monkeypatch.setattr(align, "EXACT_PAIRS", 0)
    rng = random.Random(5)
    a = [rng.randrange(10) for _ in range(309)] + [10]
    b = a[:70] + a[70:80][::-1] + a[80:-1] + [11]  # launches 70..79 reversed
    assert a[70] != a[79]
    al = align.align_tokens(0, a, b, [str(i) for i in range(12)])
    assert al.relation == "windows" and al.truncated
    assert al.first_divergence == 70
    assert al.matched_in_order == len(a) - 1
    assert dict(al.only_in_a) == {"10": 1} and dict(al.only_in_b) == {"11": 1}
