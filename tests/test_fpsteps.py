"""The fingerprint's steps are ``tracelens steps``'s (count, numbering, windows): util
--step, diff, report and fingerprint number the same steps (test_steps_same_from_every_command).

The fingerprint hands the step search the launches it has read, in host order; it handed
them without their correlation ids, so the search could not read the host's pauses
(``tracelens.steps_phase.HostGaps``) and phased period steps by the GPU's idle time alone.
Where the GPU idles alike before every launch and the host pauses before one of them,
``tracelens steps`` starts each step at that launch and the fingerprint did not: a
single-thread GPU-bound loop captured from its second kernel was 9 steps from a there and 9
from b in the fingerprint. (The on-time run of test_fpbound's two-thread loop was 23 steps
from the collective there and 24 from a in the fingerprint; the search now reads the
busiest thread's pauses only, and both are 24 from a: test_hostgaps.)
"""

from __future__ import annotations

import pytest
from test_fpbound import ALLREDUCE, _period
from test_stepsthreads import _build

import tracelens
from tracelens.synth import TraceBuilder

US = 1_000


def _gpu_bound(path, skip: int, iterations: int = 10):
    """Process 10, one host thread, on GPU 0: a, b, c, d an iteration, queued far ahead of
    the GPU (300 us kernels, a call every 10 us: the GPU idles 2 us before every launch
    alike), the host pausing 400 us before each iteration's a; the capture starts at the
    first iteration's launch ``skip``."""
    b = TraceBuilder("3.24.18")
    b.process(10, "python train.py")
    b.gpu(0)
    names = [name for _ in range(iterations) for name in "abcd"][skip:]
    tc, free = 1_000 * US, 1_000 * US
    for i, name in enumerate(names):
        if name == "a" and i:
            tc += 400 * US
        cid = b.runtime("cudaLaunchKernel_v7000", start=tc, end=tc + 5 * US, pid=10, tid=11)
        start = max(free, tc + 10 * US) + 2 * US
        b.kernel(f"void {name}(float*)", start=start, end=start + 300 * US, pid=10, stream=7,
                 correlation_id=cid)  # fmt: skip
        free, tc = start + 300 * US, tc + 10 * US
    return b.write(path)


def _steps(path) -> list[tuple]:
    """``tracelens steps``'s steps: (step, device, start_ns, end_ns)."""
    with tracelens.open(path, cache=False) as trace:
        return trace.steps().frame.select("step", "device", "start_ns", "end_ns").rows()


def _fingerprint_steps(path) -> tuple[dict, list[tuple], list[tuple]]:
    """The fingerprint's steps: its document's ``steps``, the steps it found (fp_steps:
    step, device, start_ns, end_ns) and its entries (steps, kernels, before, after)."""
    with tracelens.open(path, cache=False) as trace:
        doc = tracelens.fingerprint(trace)
        sql = "SELECT step, device, start_ns, end_ns FROM fp_steps ORDER BY device, step"
        found = trace.db.execute(sql).fetchall()
    names = [v["name"] for v in doc["variants"]]
    entries = [
        (e["steps"], [names[i] for i in e["sequence"]], e.get("before"), e.get("after"))
        for e in doc["paths"]
    ]
    return doc["steps"], found, entries


FIXTURES = {
    # test_fpbound's on-time run: the compute thread pauses before a (test_hostgaps)
    "two_threads_24": (lambda p: _period(p), 24, ["a", "b", "c", ALLREDUCE]),
    "two_threads_12": (lambda p: _period(p, iterations=12), 12, ["a", "b", "c", ALLREDUCE]),
    "one_thread_from_b": (lambda p: _gpu_bound(p, skip=1), 9, ["a", "b", "c", "d"]),
    "one_thread_from_c": (lambda p: _gpu_bound(p, skip=2), 9, ["a", "b", "c", "d"]),
}


@pytest.mark.parametrize("name", list(FIXTURES))
def test_the_fingerprint_numbers_the_steps_tracelens_steps_finds(tmp_path, name):
    """The same steps (number, device, window) as ``tracelens steps``, and the document's
    count theirs: the old code's search, without the host's pauses, gave 9 steps from b
    and from c for the one-thread loops. A step's kernels are listed one thread after
    another (the compute thread's a, b, c, then the collective)."""
    build, count, sequence = FIXTURES[name]
    path = build(tmp_path / f"{name}.sqlite")
    steps = _steps(path)
    described, found, entries = _fingerprint_steps(path)
    assert len(steps) == count
    assert found == steps
    assert described == {"method": "period", "count": count}
    in_steps = [e for e in entries if e[0]]
    assert [(e[0], e[1]) for e in in_steps] == [(list(range(1, count + 1)), sequence)]


def test_steps_found_from_the_gpu_alone_are_unchanged(tmp_path):
    """Guard: the two-thread loop of test_stepsthreads (the GPU idles before each
    iteration's a) and its run with a late collective: 12 steps from a, the same in both
    commands, before as after."""
    for late in ((), (2,)):
        path = _build(tmp_path / f"late{len(late)}.sqlite", late=late)
        described, found, entries = _fingerprint_steps(path)
        assert found == _steps(path)
        assert described == {"method": "period", "count": 12}
        assert entries == [(list(range(1, 13)), ["a", "b", "c", ALLREDUCE], None, None)]
