"""Two threads of one process launching on one device, their launches interleaving as the
host's timing has it (issue #10's leftover: the step search orders a process's launches by
correlation id, which CUPTI numbers in the order the calls were made, over all threads).

Fixture, built here: process 100, device 0, 20 iterations 1 ms apart: thread 100 launches
a_k, b_k, c_k 100 us apart (stream 7), thread 101 x_k then y_k 120 us later (stream 8).
In lockstep (x_k 50 us into every iteration) the launch sequence is periodic, a motif of 5
kernels; with x_k anywhere in the first 250 us of its iteration (seeded), x_k and y_k fall
between a different pair of thread 100's launches from one iteration to the next and no
stretch of the sequence repeats exactly. The search used to abstain there; each iteration
still starts after the GPU idled and launches the same five kernels, in another order, and
the motif search takes a step's launches in any order when no motif fits in order
(tracelens.steps_motif._segments).

Adversarial fixtures (two threads that are not one loop): two loops of different periods
(1 ms and 1.37 ms), and two threads launching random kernels at random times. Neither has
one step structure: the search abstains (the first reaches the any-order fit, which must
not take it for steps).
"""

from __future__ import annotations

import random

import pytest

import tracelens
from tracelens import steps_motif
from tracelens.synth import TraceBuilder

US = 1_000
STEPS = 20


def build(path, jitter_ns: int, seed: int = 3) -> str:
    rng = random.Random(seed)
    calls = []
    for s in range(STEPS):
        t = 2_000 * US + s * 1_000 * US
        calls += [(t + i * 100 * US, 100, name, 7, 60 * US) for i, name in enumerate("abc")]
        x = t + (rng.randrange(jitter_ns) if jitter_ns else 50 * US)
        calls += [(x, 101, "x", 8, 20 * US), (x + 120 * US, 101, "y", 8, 20 * US)]
    return write(path, calls)


def write(path, calls) -> str:
    """Process 100 on device 0, threads 100 and 101: each call (host start, thread, kernel
    name, stream, GPU length) launches its kernel 20 us later or when its stream frees."""
    b = TraceBuilder("3.25.0")
    b.process(100, "python t.py")
    b.thread("main", pid=100, tid=100)
    b.thread("side", pid=100, tid=101)
    b.gpu(0)
    free: dict[int, int] = {}
    for t, tid, name, stream, length in sorted(calls):  # correlation ids in call order
        cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 3 * US, pid=100, tid=tid)
        start = max(t + 20 * US, free.get(stream, 0))
        b.kernel(f"void {name}_k(float*)", start=start, end=start + length, pid=100,
                 stream=stream, correlation_id=cid)  # fmt: skip
        free[stream] = start + length
    return str(b.write(path))


def test_two_threads_in_lockstep_are_one_motif(tmp_path):
    with tracelens.open(build(tmp_path / "lockstep.sqlite", 0), cache=False) as trace:
        found = trace.steps()
    assert (found.method, found.count) == ("period", STEPS)
    assert len(found.motif[0]) == 5


def test_two_threads_with_jitter_are_still_steps(tmp_path):
    # the old search found no steps here (strict xfail until then)
    with tracelens.open(build(tmp_path / "jitter.sqlite", 250 * US), cache=False) as trace:
        found = trace.steps()
    assert found.method == "period", found.detail
    assert found.count == STEPS
    assert sorted(found.motif[0]) == [f"void {n}_k(float*)" for n in "abcxy"]
    frame = found.frame.sort("step")
    assert frame["kernels"].to_list() == [5] * STEPS
    # each step starts with a_k, 20 us after its call at the iteration's start
    assert frame["start_ns"].to_list() == [2_020 * US + s * 1_000 * US for s in range(STEPS)]
    assert ", in another order in " in found.detail


def test_two_loops_of_different_periods_are_not_steps(tmp_path, monkeypatch):
    # thread 100: a, b, c every 1 ms; thread 101: x, y every 1.37 ms, not in step with it
    calls = [
        (2_000 * US + s * 1_000 * US + i * 100 * US, 100, name, 7, 60 * US)
        for s in range(STEPS)
        for i, name in enumerate("abc")
    ] + [
        (2_300 * US + s * 1_370 * US + i * 120 * US, 101, name, 8, 20 * US)
        for s in range(14)
        for i, name in enumerate("xy")
    ]
    tried = []
    segments = steps_motif._segments

    def spy(ids, anchor, conf, any_order=False):
        found = segments(ids, anchor, conf, any_order)
        tried.append((any_order, found is not None))
        return found

    monkeypatch.setattr(steps_motif, "_segments", spy)
    with tracelens.open(write(tmp_path / "two_loops.sqlite", calls), cache=False) as trace:
        found = trace.steps()
    assert (True, False) in tried  # the any-order fit was tried, and found none
    assert found.method == "none", found.detail


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_two_random_threads_are_not_steps(tmp_path, seed):
    rng = random.Random(seed)
    calls = [
        (rng.randrange(2_000 * US, 22_000 * US), tid, rng.choice(pool), stream, 20 * US)
        for tid, pool, stream, count in ((100, "abcd", 7, 60), (101, "wxyz", 8, 40))
        for _ in range(count)
    ]
    with tracelens.open(write(tmp_path / "random.sqlite", calls), cache=False) as trace:
        found = trace.steps()
    assert found.method == "none", found.detail
