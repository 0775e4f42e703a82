"""A level shift in step time (the run slows down or speeds up part-way and stays there) is
told, with the median of each part, instead of one median no step took (review7, minor:
115 us for 12 steps then 215 us had no note and a median of 165 us; the reverse was called
"step times keep changing"). Noise, a single slow step and a steady trend are not shifts.
Expected values come from the fixtures: each step is kernels a, b, c, d (40, 30, 20, 10 us)
with 5 us between launches and 50 us after the step, so a step lasts 115 us, or 215 us when
every kernel lasts twice as long."""

from __future__ import annotations

import json
import random

import tracelens
from tracelens.steps import settings, shift_index
from tracelens.steps_text import render
from tracelens.synth import TraceBuilder

US = 1_000
BASE = (("a", 40), ("b", 30), ("c", 20), ("d", 10))
PACING = settings()["pacing"]


def write_steps(path, scales: list[float]) -> str:
    """One process, device 0: one step of a, b, c, d per scale, each kernel ``scale``
    times its base length."""
    b = TraceBuilder("3.24.18")
    b.process(9, "python train.py")
    b.gpu(0)
    t = 1_000 * US
    for scale in scales:
        for name, length in BASE:
            d = round(length * scale * US)
            c = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 2 * US, pid=9)
            b.kernel(
                f"void {name}(float*)",
                start=t + 3 * US,
                end=t + 3 * US + d,
                pid=9,
                correlation_id=c,
            )
            t += d + 5 * US
        t += 50 * US
    b.write(path)
    return str(path)


def steps_of(tmp_path, scales):
    path = tmp_path / "steps.sqlite"
    write_steps(path, scales)
    with tracelens.open(path) as trace:
        found = trace.steps()
        text = render(found, fmt="table", timeunit="us", source="steps.sqlite", width=200)
        doc = json.loads(render(found, fmt="json", timeunit="us", source="steps.sqlite"))
    return found, text, doc


def test_a_slowdown_is_told_with_each_parts_median(tmp_path):
    found, text, doc = steps_of(tmp_path, [1] * 12 + [2] * 12)
    assert found.count == 24
    assert found.detail.endswith("; step time changed at step 13: 115.0 µs -> 215.0 µs median")
    assert (
        "not steady: step time changed at step 13: 115.0 µs -> 215.0 µs median (12 steps before, 12 from it); all 24 steps: median 165.0 µs"
        in text
    )
    assert "steady state" not in text
    assert doc["summary"]["level_shift"] == {
        "step": 13,
        "before_steps": 12,
        "before_median_us": 115.0,
        "after_steps": 12,
        "after_median_us": 215.0,
    }
    # the fields that were there are still there, unchanged
    assert doc["summary"]["median_us"] == 165.0


def test_a_speedup_is_a_shift_not_a_trend(tmp_path):
    found, _, doc = steps_of(tmp_path, [2] * 12 + [1] * 12)
    assert "step times keep changing" not in found.detail
    assert found.detail.endswith("; step time changed at step 13: 215.0 µs -> 115.0 µs median")
    assert doc["summary"]["level_shift"]["step"] == 13
    assert doc["summary"]["warmup_steps"] == [] and doc["summary"]["outlier_steps"] == []


def test_a_late_slowdown_is_a_shift_and_its_steps_are_not_outliers(tmp_path):
    # 19 fast steps then 6 slow: against the one median, every slow step was an outlier
    found, _, doc = steps_of(tmp_path, [1] * 19 + [2] * 6)
    assert found.level_shift.step == 20
    assert doc["summary"]["outlier_steps"] == []
    assert found.detail.endswith("step time changed at step 20: 115.0 µs -> 215.0 µs median")


def test_a_steady_run_with_noise_has_no_shift(tmp_path):
    rnd = random.Random(3)
    found, text, doc = steps_of(tmp_path, [rnd.uniform(0.9, 1.1) for _ in range(40)])
    assert found.level_shift is None and doc["summary"]["level_shift"] is None
    assert "changed" not in found.detail and "steady state (40 steps): median" in text


def test_a_single_slow_step_is_an_outlier_not_a_shift(tmp_path):
    found, _, doc = steps_of(tmp_path, [1] * 10 + [3] + [1] * 13)
    assert found.level_shift is None and "changed" not in found.detail
    assert doc["summary"]["outlier_steps"] == [11]


def test_shift_index_needs_enough_steps_each_side_and_a_large_enough_change():
    assert shift_index([100] * 12 + [200] * 12, PACING) == 12
    assert shift_index([100] * 4 + [200] * 4, PACING) is None  # too few steps each side
    assert shift_index([100] * 20 + [200] * 4, PACING) is None  # the slow part is too short
    assert shift_index([100] * 12 + [115] * 12, PACING) is None  # 15%: under min_change
    # a steady trend (a shrinking workload) spreads each part as far as it moves
    assert shift_index([300 - 8 * i for i in range(30)], PACING) is None


def test_steps_within_two_percent_of_the_median_are_neither_warm_up_nor_outliers():
    # Steps that differ by microseconds (26.10 ms +- 5 us, as the A100 NVTX export's) have
    # so small a MAD that a step 0.2-0.6% slower scored past the z cut-off: leading ones as
    # warm-up, later ones as outliers. Within min_off_share (2%) of the median no step is
    # off; the 20% slower first steps are warm-up and a 5% slower step is an outlier still.
    from tracelens.steps_pacing import judge_steps

    rng = random.Random(7)
    steady = [26_100_000 + rng.randint(-5_000, 5_000) for _ in range(40)]
    durations = [31_500_000] * 4 + [26_160_000] * 4 + steady[:10] + [26_250_000]
    durations += steady[10:20] + [27_500_000] + steady[20:]
    warmup, outlier, shift = judge_steps(durations, 0, settings())
    assert warmup == [True] * 4 + [False] * (len(durations) - 4)
    assert [i for i, o in enumerate(outlier) if o] == [durations.index(27_500_000)]
    assert shift is None
