"""Period steps on a long loop (bench/make_trace.py --loop), same answers, less work:

- the step-length test :func:`tracelens.steps_motif._segments` starts with: a shorter
  period's anchor in a long loop (a kernel launched twice an iteration, 30 and 70 launches
  apart) splits it into steps of two lengths, which no motif with optional launches fits,
  known from the lengths before every step's tokens are joined into strings;
- a step's busy time (:func:`tracelens.steps_period_table._busy`) as the sweep's gain per
  operation, not a group-by per island."""

from __future__ import annotations

import random

import polars as pl
import pytest

from tracelens import steps_motif
from tracelens.steps import settings

CONF = settings()["period"]


def ids(tokens):
    return pl.Series("name_id", tokens, dtype=pl.Int64)


def test_two_lengths_cannot_fit():
    # kernel 1 at 0 and 30 in a loop of 100: steps of 30 and 70 launches alternate, and
    # 70 is more than 30 and half of it (max_optional_share)
    loop = [1] + [2] * 29 + [1] + [3] * 69
    assert steps_motif._lengths_could_fit(ids(loop * 30), 1, CONF) is False


def test_optional_launches_can_fit():
    # a motif of 10, an extra launch every 4th iteration: lengths 10 and 11, all fit
    tokens = []
    for i in range(30):
        tokens += list(range(1, 11)) + ([99] if i % 4 == 3 else [])
    assert steps_motif._lengths_could_fit(ids(tokens), 1, CONF) is True
    assert steps_motif._segments(ids(tokens), 1, CONF) is not None


def test_too_few_steps():
    tokens = list(range(1, 11)) * CONF["min_repeats"]
    assert steps_motif._lengths_could_fit(ids(tokens), 1, CONF) is False
    assert steps_motif._segments(ids(tokens), 1, CONF) is None
    assert steps_motif._lengths_could_fit(ids(tokens + [1]), 1, CONF) is True


def test_last_step_counts_as_segments_counts_it():
    # 9 steps of 10 and a last one of 3 (cut by the capture's end), min_match 0.9 of 9:
    # 9 of the 10 lengths fit, 9 >= 8.1
    tokens = list(range(1, 11)) * 9 + [1, 2, 3]
    assert steps_motif._lengths_could_fit(ids(tokens), 1, CONF) is True


def _sequences():
    rng = random.Random(7)
    for _ in range(120):
        motif = [rng.randrange(1, 6) for _ in range(rng.randrange(2, 12))]
        tokens = []
        for _ in range(rng.randrange(3, 40)):
            step = list(motif)
            for _ in range(rng.choice((0, 0, 0, 1, 2, 6))):
                step.insert(rng.randrange(1, len(step) + 1), rng.randrange(1, 9))
            if rng.random() < 0.1:
                rng.shuffle(step)
            tokens += step
        yield tokens[rng.randrange(0, 3) :], motif[0]


@pytest.mark.parametrize("any_order", [False, True])
def test_same_steps_as_without_the_length_test(monkeypatch, any_order):
    """Where the test says no, the full search finds nothing either; elsewhere the search is
    unchanged (the test only skips work)."""
    cases = list(_sequences())
    with_test = [steps_motif._segments(ids(t), a, CONF, any_order) for t, a in cases]
    said_no = [not steps_motif._lengths_could_fit(ids(t), a, CONF) for t, a in cases]
    monkeypatch.setattr(steps_motif, "_lengths_could_fit", lambda *_: True)
    without = [steps_motif._segments(ids(t), a, CONF, any_order) for t, a in cases]
    assert with_test == without
    assert any(said_no) and not all(said_no)
    assert all(w is None for w, no in zip(without, said_no, strict=True) if no)
    assert any(w is not None for w in without)


def _union(intervals):
    covered, end = 0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            covered, end = covered + b - a, b
        elif b > end:
            covered, end = covered + b - end, b
    return covered


def test_busy_is_the_union_of_each_steps_operations():
    """steps_period_table._busy without grouping by island (a loop's kernels are nearly all
    islands of their own): the union of each step's intervals, overlaps, nesting, touching
    ends and equal starts included."""
    from tracelens.steps_period_table import _busy

    rng = random.Random(11)
    rows = []
    for step in range(40):
        t = rng.randrange(0, 10**6)
        for _ in range(rng.randrange(1, 30)):
            t += rng.choice((0, 0, 5, 300, -200))
            rows.append((step, t, t + rng.choice((0, 1, 50, 400, 2_000))))
    rng.shuffle(rows)
    held = pl.DataFrame(rows, schema=["step", "start_ns", "end_ns"], orient="row")
    got = dict(_busy(held).rows())
    want = {s: _union([(a, b) for st, a, b in rows if st == s]) for s in range(40)}
    assert got == want
