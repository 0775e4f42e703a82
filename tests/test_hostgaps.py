"""Two runs of one program give the same steps: the step search phases a period's steps at
the host's longest pause before a launch call (tracelens.steps_phase) when the GPU idles
alike before every launch, and measured that pause per host thread. A communication thread
that calls once an iteration always paused longest (a whole iteration between its calls),
so the on-time run of test_fpbound's two-thread loop was 23 steps from the collective while
its runs with a late collective were 24 from a, and ``fingerprint --check`` of one against
the other reported a path change. The pause that phases the steps is now the busiest
launching thread's, the loop's own (its pause before a: the collective's call and two
intervals).
"""

from __future__ import annotations

import pytest
from conftest import run_cli
from test_fpbound import ALLREDUCE, _period, _text
from test_fpsteps import _fingerprint_steps, _steps

US = 1_000
# a's kernel of each iteration s: its call is the (4 s)th, made at 1 ms + 250 us each, and
# the kernel starts 10 us after it (the GPU is idle then), in every run below
A_STARTS = [1_000 * US + 4 * s * 250 * US + 10 * US for s in range(24)]


@pytest.mark.parametrize("late", [(), (5,), (5, 15)])
def test_on_time_and_late_runs_give_the_same_steps_from_a(tmp_path, late):
    """``tracelens steps`` and the fingerprint: 24 steps, each started at its a, whether
    the collective was called on time or after the next iteration's a (the old code: 23
    steps from the collective in the on-time run)."""
    path = _period(tmp_path / "run.sqlite", late=set(late))
    steps = _steps(path)
    described, found, entries = _fingerprint_steps(path)
    assert [s[2] for s in steps] == A_STARTS
    assert [s[0] for s in steps] == list(range(1, 25))
    assert found == steps
    assert described == {"method": "period", "count": 24}
    assert entries == [(list(range(1, 25)), ["a", "b", "c", ALLREDUCE], None, None)]


def test_a_late_run_passes_the_check_against_the_on_time_run(tmp_path, capsys):
    """``fingerprint --check`` of runs with one and two late collectives against the
    on-time run's document: the same path (the old code: exit 1, a path change)."""
    base = tmp_path / "base.json"
    base.write_text(_text(_period(tmp_path / "base.sqlite")))
    for name, late in (("late", {5}), ("two", {5, 15})):
        run = _period(tmp_path / f"{name}.sqlite", late=late)
        rc, out, _ = run_cli(["fingerprint", run, "--check", base], capsys)
        assert (rc, out) == (
            0,
            f"numerical path: {name}.sqlite follows base.json exactly (1 region)\n",
        )
