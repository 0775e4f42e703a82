"""The steps' detail names the outlier steps as it names the warm-up steps ('outliers:
step 38', 'outliers: steps 3, 7'): a bare 'outliers: 38' of a 40-step run read as a
count of 38 outliers.

Fixtures: test_steps_motif's generator (one process on device 0, iterations of a, b, c,
d: 115 us each, 50 us of host work between them); a slow step's kernels last 3x as long."""

from __future__ import annotations

import pytest
from test_steps_motif import BASE, build

import tracelens


def iterations(slow, count=20):
    return [[(name, d * 3 if i in slow else d) for name, d in BASE] for i in range(1, count + 1)]


@pytest.mark.parametrize(
    ("slow", "words"),
    [((12,), "; outliers: step 12"), ((9, 15), "; outliers: steps 9, 15")],
    ids=["one", "two"],
)
def test_outliers_are_named_as_steps(tmp_path, slow, words):
    """Fails on the old code: the detail ended '; outliers: 12' and '; outliers: 9, 15'."""
    path = build(tmp_path / "slow.sqlite", iterations(set(slow)))
    with tracelens.open(path) as trace:
        steps = trace.steps()
    assert steps.summary()["outlier_steps"] == list(slow)
    assert steps.detail.endswith(words)


# Steps of two levels at random (1x or 1.4x; seeded): the first three are slow ones.
TWO_LEVELS = [1.4, 1.4, 1.4, 1, 1, 1.4, 1, 1, 1.4, 1, 1.4, 1, 1, 1.4, 1, 1, 1.4, 1, 1, 1.4]
TWO_LEVELS += [1, 1.4, 1, 1, 1.4, 1, 1.4, 1, 1, 1, 1.4, 1, 1.4, 1, 1, 1.4, 1, 1, 1.4, 1]


def scaled(factors):
    return [[(name, round(d * f)) for name, d in BASE] for f in factors]


def test_two_levels_of_step_time_are_no_outliers_nor_warm_up(tmp_path):
    """Fails on the old code: 13 of the 37 steps after the first three were outliers, and
    the first three 1.4x steps warm-up, though as slow as the 13."""
    assert TWO_LEVELS.count(1.4) == 16
    path = build(tmp_path / "two.sqlite", scaled(TWO_LEVELS))
    with tracelens.open(path) as trace:
        steps = trace.steps()
    summary = steps.summary()
    assert (summary["outlier_steps"], summary["warmup_steps"]) == ([], [])
    assert steps.figures()["outlier_steps"] == 0
    assert steps.detail.endswith(
        "; step time varies: 16 of 40 steps are off the median (115.0 µs), too many to call "
        "outliers (over 20%)"
    )


def test_a_warm_up_slower_than_every_later_step_stays_warm_up(tmp_path):
    """Three 3x steps first, then the two levels: the three are warm-up (slower than
    every later step); none of the others is an outlier."""
    path = build(tmp_path / "warm.sqlite", scaled([3, 3, 3, *TWO_LEVELS[3:]]))
    with tracelens.open(path) as trace:
        steps = trace.steps()
    summary = steps.summary()
    assert (summary["outlier_steps"], summary["warmup_steps"]) == ([], [1, 2, 3])
    assert "step time varies: 13 of 37 steps are off the median" in steps.detail


def test_a_few_slow_steps_are_still_outliers(tmp_path):
    """Four 1.4x steps of 40 (10%) are outliers, as before."""
    factors = [1.4 if i in (9, 17, 25, 33) else 1 for i in range(1, 41)]
    path = build(tmp_path / "few.sqlite", scaled(factors))
    with tracelens.open(path) as trace:
        steps = trace.steps()
    assert steps.summary()["outlier_steps"] == [9, 17, 25, 33]
    assert steps.detail.endswith("; outliers: steps 9, 17, 25, 33")
