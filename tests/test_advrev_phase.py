"""Adversarial review of aa43a5b (compare/phase._whole_steps): diff re-phasing under a
selection leaves out the re-phased end steps the selection holds only part of. The pair
is test_compare2_shift_selection's (40 iterations of one loop; B's steps re-phased at the
attention kernel); B's shift (from iteration 20) is outside --steps 5:8. Each iteration
launches 685 µs of kernels in A and 880 µs in B (B's reduction: 210 µs, not 15 µs)."""

from __future__ import annotations

import pytest
from test_compare2_shift_selection import PHASED, looped, steps_diff

# B's kernel time per iteration over A's: (400+20+210+120+60+20+50) / (400+20+15+120+60+20+50)
PER_STEP = 880 / 685


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("advrev_phase")
    a = looped(tmp, "a", {3: 200_000, 5: 150_000})
    b = looped(tmp, "b", {3: 5_000, 5: 150_000}, reduce_ns=210_000, shift_at=20)
    return a, b


@pytest.mark.parametrize("spec", ["5:8", "1:19", "11:30"])
def test_steps_cut_at_the_ends_say_which(pair, spec):
    """Holds: the two end steps the re-phased selection holds part of are left out and
    named; the whole steps between stay (a selection of n steps: n - 1 whole ones)."""
    first, last = map(int, spec.split(":"))
    d = steps_diff(*pair, spec)
    assert PHASED in d.notes[-1]
    assert f"B's steps {first} and {last + 1} left out of its steps" in d.notes[-1]
    assert d.figures["steps"] == last - first
    assert d.figures["steps_a"] == last - first + 1


@pytest.mark.parametrize("spec", ["5:8", "1:19"])
def test_gpu_time_per_step_ratio_counts_the_work_of_the_selected_steps(pair, spec):
    """--steps 5:8 selects 4 iterations of each run: B's kernel time per step is
    880/685 = 1.28x A's. B re-phased holds 3 whole steps and two parts that together hold
    a fourth iteration's kernels; the ratio divided B's 4 iterations by 3 steps (1.71x;
    before aa43a5b by 5, 1.03x). Now the parts count as the step's worth they hold
    (compare.notes.impact_steps, Side.cut_steps)."""
    d = steps_diff(*pair, spec)
    assert d.figures["gpu_time_per_step_ratio"] == pytest.approx(PER_STEP, rel=0.01)


def test_the_steps_note_says_no_count_of_the_whole_trace_beside_the_selected_steps(pair):
    """B re-phased under --steps 5:8 holds 3 steps; the steps note said they were found
    'exactly in 39 of its 39 steps' (the whole trace's re-phased search), beside '3 steps'.
    What the steps were found from (Steps.source) holds no counts: the motif alone."""
    d = steps_diff(*pair, "5:8")
    steps_note = next(n for n in d.notes if n.startswith("steps: "))
    assert steps_note == (
        "steps: A 4 steps, B 3 steps, from the period of the kernel launch sequence "
        "(device 0: a motif of 7 kernels)"
    )
