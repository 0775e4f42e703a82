"""Pairs where B's kernels share the GPU with each other. B runs the training step on two
overlapping streams, each kernel 1.4× longer (sharing the SMs), the step period the same:
the board said "the whole GPU side got slower alike: clocks or power limits, another GPU
model, contention from other work on the GPU", a GPU cause for B's own concurrency. And B
adds two 20 µs fills per step on a side stream, under the GEMMs: the board said the fill
kernel was "9.22× longer per call ... the same kind of work got slower" (its mean mixes the
1.5 µs fill with the new 20 µs ones) beside "3.00× the calls per step", +37 and +27.67
µs/step for 40 µs of added kernel time per step."""

from __future__ import annotations

import pytest
from fixtures.builder import FILL, XMMA_GEMM
from test_diff_pairs import STEP
from test_diff_unseen_pairs import PID, pair, recorder, serial

from tracelens.compare.render import markdown


def contended(tmp_path, stem, steps, slow=1.4):
    """Even kernels on stream 7, odd ones on stream 8 from the step's start, each ``slow``×
    its serial time; steps start as often as A's serial steps do."""
    r, t = recorder(), 1_000_000
    period = sum(d + 1_000 for _, d in STEP) + 20_000
    for _ in range(steps):
        s7 = s8 = t
        for i, (name, dur) in enumerate(STEP):
            d = int(dur * slow)
            if i % 2 == 0:
                r.kernel(name, s7, d, pid=PID, stream=7)
                s7 += d + 1_000
            else:
                r.kernel(name, s8, d, pid=PID, stream=8)
                s8 += d + 1_000
        t += period
    return r.write(tmp_path, stem).path


def side_fills(tmp_path, stem, steps):
    """A's step, with a 20 µs fill on stream 8 under each GEMM (2 per step)."""
    r, t = recorder(), 1_000_000
    for _ in range(steps):
        for name, dur in STEP:
            r.kernel(name, t, dur, pid=PID, stream=7)
            if name == XMMA_GEMM:
                r.kernel(FILL, t + 1_000, 20_000, pid=PID, stream=8)
            t += dur + 1_000
        t += 20_000
    return r.write(tmp_path, stem).path


def test_kernels_longer_beside_each_other_are_not_called_a_slower_gpu(tmp_path):
    d = pair(serial(tmp_path, "a", 30, STEP), contended(tmp_path, "b", 30))
    (c,) = [c for c in d.clues if c.id == "uniform_change"]
    assert c.clue == "the typical kernel is 1.40× longer per call"
    assert c.strength == "moderate"
    assert c.verdict.startswith(
        "B's compute kernels ran more at once (34% of their time beside another compute "
        "kernel, A: 0%): kernels that share the GPU each take longer"
    )
    assert "clocks or power limits" not in markdown(d)
    assert "time_accounting" not in [c.id for c in d.clues]  # the wall time did not move


def test_a_gpu_slower_alike_keeps_its_verdict(tmp_path):
    """Every kernel 1.4× on one stream: no concurrency, the GPU verdict stands."""
    scale = dict.fromkeys((n for n, _ in STEP), 1.4)
    d = pair(serial(tmp_path, "a", 30, STEP), serial(tmp_path, "b", 30, STEP, scale=scale))
    (c,) = [c for c in d.clues if c.id == "uniform_change"]
    assert c.verdict.startswith("the whole GPU side got slower alike: clocks or power limits")
    assert c.strength == "strong"


def test_added_calls_of_another_size_are_the_calls_clue_alone(tmp_path):
    d = pair(serial(tmp_path, "a", 30, STEP), side_fills(tmp_path, "b", 30))
    ids = [c.id for c in d.clues]
    assert "per_call_outlier" not in ids
    (calls,) = [c for c in d.clues if c.id == "calls_per_step"]
    assert calls.rows == (FILL,)
    assert calls.impact_ns == pytest.approx(40_000)  # two 20 µs fills per step
    assert calls.evidence == (
        "1 → 3 calls in every step (30 steps in B); per call 1.50 µs → 13.83 µs on average, "
        "a mean over the calls that were there and those added or removed"
    )
    assert "time_accounting" not in ids and "step_time" not in ids  # hidden under the GEMMs
