"""Period steps of a motif with an optional kernel (an EMA update every 4th iteration) are
judged against steps of the same shape: a step is no outlier for being the longer variant,
and a step that is slow for its shape still is. A shape with too few steps to judge on its
own is judged with the others, and its flagged steps say what they launched.

Fixtures: test_steps_motif's generator (one process on device 0, 24 iterations of a, b, c,
d: 115 us each, 50 us of host work between them); the optional kernel lasts 18 us, which
with its 5 us launch gap adds 20% to its steps; the slow step's kernels last 3.3x as long
(345 us, 3x the step)."""

from __future__ import annotations

import pytest
from test_steps_motif import BASE, US, build

import tracelens
from tracelens.steps_judge import same_shape

EMA = "void opt_ema(float*)"


def iterations(optional, slow, count=24):
    out = []
    for i in range(1, count + 1):
        kernels = [(name, round(d * 3.3) if i == slow else d) for name, d in BASE]
        out.append(kernels + ([("opt_ema", 18 * US)] if i in optional else []))
    return out


@pytest.mark.parametrize("slow", [10, 12], ids=["slow_plain_step", "slow_ema_step"])
def test_only_the_slow_step_is_an_outlier(tmp_path, slow):
    """Fails on the old code: the six steps with the EMA (4, 8, ..., 24) were outliers too
    (138 us against a median of 115 us, with every plain step alike: over the 5%)."""
    path = build(tmp_path / "opt.sqlite", iterations(range(4, 25, 4), slow))
    with tracelens.open(path) as trace:
        steps = trace.steps()
    durations = steps.frame.sort("step")["duration_ns"].to_list()
    slow_ns = 345 * US + (23 * US if slow % 4 == 0 else 0)
    assert (durations[3], durations[slow - 1]) == (138 * US, slow_ns)
    assert steps.summary()["outlier_steps"] == [slow]
    assert steps.detail.endswith(f"; outliers: step {slow}")
    assert steps.summary()["warmup_steps"] == [] and steps.median_ns == 115 * US
    assert steps.figures()["outlier_steps"] == 1


def test_a_shape_of_few_steps_says_what_its_steps_launched(tmp_path):
    """Three steps with the EMA are too few to tell what is usual for them: judged with the
    plain steps, they are outliers, and the note says they launch the EMA."""
    path = build(tmp_path / "few.sqlite", iterations((5, 11, 19), 10))
    with tracelens.open(path) as trace:
        steps = trace.steps()
    assert steps.summary()["outlier_steps"] == [5, 10, 11, 19]
    assert steps.detail.endswith(
        f"; outliers: steps 5, 10, 11, 19 (steps 5, 11, 19 also launch {EMA}, which too few steps "
        "do to judge them apart)"
    )


def test_same_shape_moves_a_shape_to_the_most_common_ones_median():
    robust = {"min_steps": 5}
    plain, ema = (), (EMA,)
    durations = [100] * 6 + [120] * 5 + [120, 300]
    shapes = [plain] * 6 + [ema] * 5 + [(EMA, "x")] + [ema]
    judged, alone = same_shape(durations, shapes, robust)
    assert judged == [100] * 6 + [100] * 5 + [120, 280] and alone == {(EMA, "x")}
    assert same_shape([1, 2, 3], [()] * 3, robust) == ([1, 2, 3], set())
