"""A capture that holds the other's launches and under one step more at its end (or start)
is no claim of which capture ended earlier: the longer run's last (first) step may have
launched them, and the launch order alone cannot tell."""

from __future__ import annotations

from test_cut_capture import NESTED_STEPS, build_nested
from test_diff_pairs import PID, STEP, Recorder

from tracelens.compare import diff


def build(tmp_path, stem, steps, *, before=(), after=()):
    """``steps`` steps of STEP on device 0, with ``before`` launched first and ``after``
    last, right after the steps (no wait between)."""
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    t = 1_000_000
    launches = [*before, *[kernel for _ in range(steps) for kernel in STEP], *after]
    for name, dur in launches:
        r.kernel(name, t, dur, pid=PID)
        t += dur + 1_000
    return r.write(tmp_path, stem).path


def capture(d):
    (c,) = [c for c in d.clues if c.id == "capture_difference"]
    return c


def test_two_more_launches_at_the_end_are_unsure_which(tmp_path):
    """B's last step launched two more kernels (the first two of a step): it read "the
    captures hold different amounts of the same work (A is B cut short)"."""
    d = diff(build(tmp_path, "a", 20), build(tmp_path, "b", 20, after=STEP[:2]))
    assert capture(d).verdict == (
        "unsure which: B holds 2 more launches at its end, under one step (8 launches): A's "
        "capture ends earlier, or B's last step launched 2 more (the launch order alone "
        "cannot tell); either way not different paths: compare per call or per step"
    )


def test_two_more_launches_at_the_start_are_unsure_which(tmp_path):
    d = diff(build(tmp_path, "a", 20, before=STEP[-2:]), build(tmp_path, "b", 20))
    assert capture(d).verdict.startswith(
        "unsure which: A holds 2 more launches at its start, under one step (8 launches): "
        "B's capture starts later, or A's first step launched 2 more"
    )


def test_a_step_and_more_at_the_end_is_a_capture_cut_short(tmp_path):
    """Ten more launches, over one step: a capture that ended earlier, as before."""
    d = diff(build(tmp_path, "a", 20), build(tmp_path, "b", 21, after=STEP[:2]))
    assert capture(d).verdict == (
        "the captures hold different amounts of the same work (A is B cut short), not "
        "different paths: compare per call or per step, or capture the same number of steps"
    )


def test_launches_past_a_cut_path_changes_end_under_a_step_may_be_a_step(tmp_path):
    """A path change (a split-K GEMM from step 12) in a capture cut inside its last step:
    A's last 8 launches, under one 16-launch step, are past B's end, or A's last step
    launched them; the path clue's evidence says both."""
    full = build_nested(tmp_path / "full.sqlite", nvtx=False)
    cut = build_nested(
        tmp_path / "cut.sqlite", nvtx=False, end_cut=(NESTED_STEPS, "backward", 2), swap_from=12
    )
    (path,) = [c for c in diff(full, cut).clues if c.id == "launch_sequence_diverges"]
    assert path.evidence.endswith(
        "B's capture ends earlier: A's last 8 launches (#379 on) are past its end, not "
        "compared (or A's last step launched them: the launch order alone cannot tell)"
    )
