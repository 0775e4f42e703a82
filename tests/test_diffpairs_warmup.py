"""The same program, B's capture starting with one warm-up step whose every kernel took
10× (``tracelens steps`` sets it aside): the steady steps are alike. The board said "GPU
wall time per step: 154.5 µs → 194.1 µs" (the warm-up spread over the steps) and "the
typical kernel is 1.29× longer per call: the whole GPU side got slower alike" (every
kernel's mean call holds one 10× call of 31). It now leaves the warm-up out of the wall
time per step, as the step line does, and says a few long calls moved the means while the
median call did not."""

from __future__ import annotations

from test_diff_pairs import STEP
from test_diff_unseen_pairs import PID, pair, recorder, serial

from tracelens.compare.render import markdown, to_json


def with_warmup(tmp_path, stem, steps, *, slow_first=10.0):
    """``steps`` training steps after one warm-up step of the same kernels, each
    ``slow_first``× its steady time."""
    r, t = recorder(), 1_000_000
    for k in range(steps + 1):
        for name, dur in STEP:
            d = int(dur * (slow_first if k == 0 else 1.0))
            r.kernel(name, t, d, pid=PID)
            t += d + 1_000
        t += 20_000
    return r.write(tmp_path, stem).path


def test_a_warm_up_in_b_only_is_no_uniform_slowdown(tmp_path):
    d = pair(serial(tmp_path, "a", 30, STEP), with_warmup(tmp_path, "b", 30))
    ids = [c.id for c in d.clues]
    assert "uniform_change" not in ids and "time_accounting" not in ids
    assert "step_time" not in ids
    (c,) = [c for c in d.clues if c.id == "few_calls_change"]
    assert c.clue == "the mean call is 1.29× longer, the median call is not"
    assert c.evidence.endswith("; the kernels' median calls: 1.00×")
    assert c.verdict.startswith(
        "a few long calls in B moved every kernel's mean alike while the typical call did "
        "not change (its median: 1.00×): its warm-up (1 step that tracelens steps sets "
        "aside), stalls, outlier steps or a one-off event, not the whole GPU side"
    )
    assert "whole GPU side got slower" not in markdown(d) + to_json(d)


def test_a_warm_up_in_a_only_names_a(tmp_path):
    d = pair(with_warmup(tmp_path, "a", 30), serial(tmp_path, "b", 30, STEP))
    (c,) = [c for c in d.clues if c.id == "few_calls_change"]
    assert c.clue == "the mean call is 1.29× shorter, the median call is not"
    assert "a few long calls in A moved" in c.verdict and "its warm-up (1 step" in c.verdict


def test_a_slower_steady_state_beside_a_warm_up_is_still_named(tmp_path):
    """Every kernel 1.3× slower in every step of B, warm-up or not: the median call moved
    too, so it is the uniform change; the wall time per step leaves the warm-up out."""
    r, t = recorder(), 1_000_000
    for k in range(31):
        for name, dur in STEP:
            d = int(dur * (13.0 if k == 0 else 1.3))
            r.kernel(name, t, d, pid=PID)
            t += d + 1_000
        t += 20_000
    d = pair(serial(tmp_path, "a", 30, STEP), r.write(tmp_path, "b").path)
    ids = [c.id for c in d.clues]
    assert "uniform_change" in ids and "few_calls_change" not in ids
    (lead,) = [c for c in d.clues if c.id == "time_accounting"]
    assert (
        "(per step, start to start, B's warm-up left out; from the steps and util)" in lead.evidence
    )
    # 8 kernels 1.3x: 126.5 µs of kernels per step -> 164.45 µs (+37.95 µs), no more
    assert lead.clue == "GPU wall time per step: 154.5 µs → 192.4 µs (+37.95 µs)"


def test_one_host_stall_is_no_slower_step(tmp_path):
    """B waits 5 ms once, before its 16th step; every step and every other wait is A's.
    The lead line said "what moved it: idle +172.4 µs" per step as if every step waited
    longer; it says the median step period did not move."""
    r, t = recorder(), 1_000_000
    for k in range(30):
        t += 5_000_000 if k == 15 else 0
        for name, dur in STEP:
            r.kernel(name, t, dur, pid=PID)
            t += dur + 1_000
        t += 20_000
    d = pair(serial(tmp_path, "a", 30, STEP), r.write(tmp_path, "b").path)
    (lead,) = [c for c in d.clues if c.id == "time_accounting"]
    assert lead.clue == "GPU wall time per step: 154.5 µs → 326.9 µs (+172.4 µs)"
    assert lead.verdict.startswith(
        "what moved it: idle +172.4 µs, a mean over the steps; the median step period did "
        "not move (154.5 µs → 154.5 µs): the time is in a few long steps or waits between them"
    )


def test_the_unit_names_whose_warm_up_was_left_out(tmp_path):
    """A sets one warm-up step aside; B starts with 2 slow steps of 7, more than steps sets
    aside, so they count. The evidence said "warm-up left out" as if of both runs."""
    a = with_warmup(tmp_path, "a", 30)
    r, t = recorder(), 1_000_000
    for k in range(7):
        for name, dur in STEP:
            d = int(dur * (3.0 if k < 2 else 1.0))
            r.kernel(name, t, d, pid=PID)
            t += d + 1_000
        t += 20_000
    d = pair(a, r.write(tmp_path, "b").path)
    (lead,) = [c for c in d.clues if c.id == "time_accounting"]
    assert "(per step, start to start, A's warm-up left out; from the steps and util)" in (
        lead.evidence
    )
