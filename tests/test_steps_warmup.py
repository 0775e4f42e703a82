"""Warm-up is a leading run of slow steps that ends within the first 25% of the steps
(``max_warmup_fraction``). A workload whose steps shrink for longer (a Gaussian elimination
on a shrinking matrix: nsys2022.4_gaussian_7gpu) is not warming up: before, its first 25%
were called warm-up, cut at the cap, and the rest of the same trend were outliers. Now the
summary says the warm-up was not found within the cap and why, sets nothing aside and
flags none of that run as outliers. Expected values come from the fixtures."""

from __future__ import annotations

import tracelens
from tracelens.steps import flag_steps, settings, warmup_cap_hit
from tracelens.synth import TraceBuilder

ROBUST = settings()["robust"]
US = 1_000


def shrinking(steps: int = 30, shrinking_steps: int = 12) -> list[int]:
    """Step times in us: 300 shrinking by 16 per step for ``shrinking_steps`` (to 124), then
    100: the first 12 of 30 steps are slower than the median, past the cap of 7."""
    return [300 - 16 * i if i < shrinking_steps else 100 for i in range(steps)]


def test_a_warmup_that_ends_within_the_cap_is_set_aside():
    durations = [900, 500] + [100] * 22
    warm, odd = flag_steps(durations, ROBUST)
    assert warm == [True, True] + [False] * 22 and not any(odd)
    assert warmup_cap_hit(durations, ROBUST) is None
    # ending exactly at the cap (6 of 24) is still a warm-up
    durations = [300] * 6 + [100] * 18
    assert flag_steps(durations, ROBUST)[0] == [True] * 6 + [False] * 18
    assert warmup_cap_hit(durations, ROBUST) is None


def test_slow_steps_past_the_cap_are_a_trend_not_a_warmup():
    durations = shrinking()
    warm, odd = flag_steps(durations, ROBUST)
    assert not any(warm) and not any(odd)
    assert warmup_cap_hit(durations, ROBUST) == (
        "not detected within the first 25% of the steps (step times keep changing: steps 1 "
        "to 12 are all slower than the median, neither set aside nor outliers)"
    )
    # a stall after the trend is still an outlier
    durations[18] = 400
    assert flag_steps(durations, ROBUST) == ([False] * 30, [i == 18 for i in range(30)])


def test_steps_of_a_shrinking_workload(tmp_path):
    b = TraceBuilder("3.25.0")
    b.process(100, "python gauss.py")
    b.gpu(0)
    t = 1_000 * US
    for s, us in enumerate(shrinking(), start=1):
        c = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 2 * US)
        b.kernel("eliminate(float*)", start=t + 5 * US, end=t + 5 * US + us * US, correlation_id=c)
        b.nvtx_range(f"ProfilerStep#{s}", start=t - 1 * US, end=t + 3 * US)
        t += us * US + 50 * US
    path = tmp_path / "shrinking.sqlite"
    b.write(path)
    with tracelens.open(path) as trace:
        s = trace.steps()
    assert s.count == 30
    summary = s.summary()
    assert summary["warmup_steps"] == [] and summary["outlier_steps"] == []
    assert "warm-up: not detected within the first 25% of the steps" in s.detail
    assert "set aside)" not in s.detail and "outliers:" not in s.detail
    assert s.steady.height == 30 and s.median_ns == 100 * US
