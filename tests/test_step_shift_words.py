"""A level shift in step time (``Steps.level_shift``, told by ``tracelens steps``) is told
where the diff board and the HTML page present the steps: one median of two levels is a time
few steps took. The board's step line says, on the side that shifted, where and each part's
median, and its verdict no longer calls that median the typical step; a pair where only B
shifted and the medians stay close is on the board at all. The page's steps summary leads with
the shift. The ``step_median_ms`` gate keeps the median of all steady steps.
Each step is kernels a, b, c, d (40, 30, 20, 10 us) with 5 us between launches and 50 us
after the step: it lasts 115 us, or 215 us when every kernel lasts twice as long (as
tests/test_steps_pacing.py)."""

from __future__ import annotations

from html import unescape

from test_steps_pacing import US, write_steps  # the same generator: 115 us steps, 215 doubled

import tracelens
from tracelens.compare import diff
from tracelens.report import build_report

SHIFT_AT_13 = "not steady: step time changed at step 13: 115.0 µs -> 215.0 µs median"


def board(tmp_path, scales_a, scales_b):
    a = write_steps(tmp_path / "a.sqlite", scales_a)
    b = write_steps(tmp_path / "b.sqlite", scales_b)
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        return diff(ta, tb)


def step_clue(d):
    (clue,) = [c for c in d.clues if c.id == "step_time"]
    return clue


def test_only_b_shifted_is_said_on_bs_side(tmp_path):
    d = board(tmp_path, [1] * 24, [1] * 12 + [2] * 12)
    clue = step_clue(d)
    side_a, side_b = clue.evidence.split("; B: ")
    assert side_a == "A: 24 steps, median 115.0 µs, p90 115.0 µs, std 0 ns"
    assert side_b.startswith(
        f"{SHIFT_AT_13} (12 steps before, 12 from it), 24 steps, median of all 165.0 µs, p90 "
    )
    # the headline and the gate keep the median of all steady steps
    assert clue.clue.startswith("steady-state step: median 115.0 µs → 165.0 µs")
    assert d.figures["step_median_ms"] == 0.165
    assert clue.verdict.startswith("the step time of B changed part-way")
    assert "typical step" not in clue.verdict


def test_a_shift_with_close_medians_is_still_on_the_board(tmp_path):
    """B's last 10 steps take 215 us, its median stays 115 us as A's: without the shift the
    medians did not move and the board said nothing of B's slower steps."""
    d = board(tmp_path, [1] * 26, [1] * 16 + [2] * 10)
    assert d.sides[1].steps.median_ns == d.sides[0].steps.median_ns == 115 * US
    clue = step_clue(d)
    assert "; B: " + SHIFT_AT_13.replace("13", "17") + " (16 steps before, 10 from it)" in (
        clue.evidence
    )
    assert clue.impact_ns == 0


def test_a_shift_on_both_sides_is_said_on_both(tmp_path):
    d = board(tmp_path, [1] * 12 + [2] * 12, [2] * 12 + [1] * 12)
    clue = step_clue(d)
    assert clue.evidence.startswith(f"A: {SHIFT_AT_13} (12 steps before, 12 from it)")
    assert "; B: not steady: step time changed at step 13: 215.0 µs -> 115.0 µs median" in (
        clue.evidence
    )
    assert clue.verdict.startswith("the step time of A and B changed part-way")


def test_steady_runs_with_the_same_step_have_no_step_clue(tmp_path):
    d = board(tmp_path, [1] * 24, [1.02] * 24)
    assert "step_time" not in {c.id for c in d.clues}


def test_the_page_leads_the_steps_summary_with_the_shift(tmp_path):
    path = write_steps(tmp_path / "shift.sqlite", [1] * 12 + [2] * 12)
    with tracelens.open(path) as trace:
        html = unescape(build_report(trace))
    assert (
        f'24 steps · <span class="up">{SHIFT_AT_13}</span> (12 steps before, 12 from it) · '
        "all steps: median 165.0 µs · p90 " in html
    )


def test_the_page_of_steady_steps_says_no_shift(tmp_path):
    path = write_steps(tmp_path / "steady.sqlite", [1] * 24)
    with tracelens.open(path) as trace:
        html = unescape(build_report(trace))
    assert "24 steps · median 115.0 µs · p90 115.0 µs" in html
    assert "not steady" not in html
