"""Period steps (no NVTX) whose iterations are not all the same launches: an optional kernel
in some iterations (review7 B1) and warm-up iterations that launch more (review7 B3).
Fixtures: review7's generators, built here with tracelens.synth."""

from __future__ import annotations

import pytest
from conftest import run_cli

import tracelens
from tracelens.synth import TraceBuilder

US = 1_000
BASE = [("a", 40 * US), ("b", 30 * US), ("c", 20 * US), ("d", 10 * US)]
PROBES = [(f"autotune_probe_{i}", 15 * US) for i in range(6)]


def build(path, iterations, spacing=5 * US):
    """One process on device 0: each iteration's kernels launched ``spacing`` apart, 50 us
    of host work between iterations (the GPU waits)."""
    b = TraceBuilder("3.24.18")
    b.process(9, "python train.py")
    b.gpu(0)
    t = 1_000 * US
    for kernels in iterations:
        for name, dur in kernels:
            c = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 2 * US, pid=9)
            start = t + 3 * US
            b.kernel(f"void {name}(float*)", start=start, end=start + dur, pid=9, correlation_id=c)
            t += dur + spacing
        t += 50 * US
    b.write(path)
    return path


def with_ema(iterations):
    return [BASE + ([("opt_ema", 5 * US)] if i in iterations else []) for i in range(1, 25)]


@pytest.mark.parametrize(
    ("extra", "exact"),
    [(range(4, 25, 4), 18), ((5, 11, 19), 21)],
    ids=["every_4th", "now_and_then"],
)
def test_an_optional_kernel_stays_in_its_iteration(tmp_path, extra, exact):
    # The old search made 4 iterations one step (a motif of 17 kernels: 6 steps) when the
    # extra kernel came every 4th iteration, and found no steps when it came now and then.
    with tracelens.open(build(tmp_path / "opt.sqlite", with_ema(extra))) as trace:
        s = trace.steps()
    assert s.method == "period", s.detail
    assert s.count == 24 and s.motif[0] == tuple(f"void {n}(float*)" for n, _ in BASE)
    kernels = s.frame.sort("step")["kernels"].to_list()
    assert kernels == [5 if i in extra else 4 for i in range(1, 25)]
    optional = 24 - exact
    assert (
        f"a motif of 4 kernels, exactly in {exact} of its 24 steps, with void opt_ema(float*) "
        f"too in {optional}"
    ) in s.detail
    assert s.median_ns == 115 * US  # an iteration: 100 us of kernels and 3 gaps of 5 us


def test_the_diff_of_an_optional_kernel_is_that_kernel(tmp_path, capsys):
    # The old steps made B's step 4 iterations: 'median 115 us -> 635 us, 5.52x'.
    a = build(tmp_path / "optA.sqlite", with_ema(()))
    b = build(tmp_path / "optB.sqlite", with_ema(range(4, 25, 4)))
    rc, out, err = run_cli(["diff", a, b, "--fail-if", "step_median_ms>0.2", "--no-cache"], capsys)
    assert rc == 0, err
    assert "+1.25 µs/step" in out and "A does not" in out
    assert "the calls per step" not in out


def test_layers_inside_a_step_are_not_steps(tmp_path):
    # Same launches as an iteration with an optional kernel, but no idle time between the
    # 'layers': the step is the whole period.
    layers = [BASE * 4 + [("loss", 5 * US)] for _ in range(10)]
    with tracelens.open(build(tmp_path / "layers.sqlite", layers, spacing=1 * US)) as trace:
        s = trace.steps()
    assert s.count == 10 and len(s.motif[0]) == 17


def test_warm_up_iterations_that_launch_more_are_set_aside(tmp_path):
    # The old search began the steps inside the 3rd warm-up iteration (its a,b,c,d), left
    # the probes in no step and set no step aside: 21 steps, warmup_steps [].
    iterations = [PROBES + BASE] * 3 + [BASE] * 20
    with tracelens.open(build(tmp_path / "warm.sqlite", iterations)) as trace:
        s = trace.steps()
    assert s.method == "period" and s.count == 23
    assert s.summary()["warmup_steps"] == [1, 2, 3]
    assert s.frame.sort("step")["kernels"].to_list() == [10] * 3 + [4] * 20
    assert "warm-up: steps 1, 2, 3 (they also launch kernels outside the motif: " in s.detail
    assert (
        "void autotune_probe_0(float*)" in s.detail and "outside complete periods" not in s.detail
    )
    assert s.figures()["warmup_steps"] == 3
    assert s.median_ns == 115 * US and s.std_ns == 0


def test_setup_before_the_loop_is_no_warm_up_step(tmp_path):
    # Kernels before the loop that do not launch the motif stay outside the steps; a warm-up
    # iteration right after them is still found.
    setup = [[("init_weights", 8 * US), ("fill", 3 * US)]]
    iterations = setup + [PROBES + BASE] + [BASE] * 12
    with tracelens.open(build(tmp_path / "setup.sqlite", iterations)) as trace:
        s = trace.steps()
    assert s.count == 13 and s.summary()["warmup_steps"] == [1]
    assert "(2 kernels outside complete periods)" in s.detail
    assert s.frame.sort("step")["kernels"].to_list() == [10] + [4] * 12


def test_warm_up_iterations_that_repeat_motif_kernels_say_so(tmp_path):
    # Warm-up iterations that launch the motif's own kernels more often (no other kernel)
    # read '(they also launch kernels outside the motif: ; set aside)': an empty list.
    iterations = [BASE + [("a", 40 * US), ("b", 30 * US)]] * 3 + [BASE] * 20
    with tracelens.open(build(tmp_path / "warm_again.sqlite", iterations)) as trace:
        s = trace.steps()
    assert s.method == "period" and s.summary()["warmup_steps"] == [1, 2, 3], s.detail
    assert "warm-up: steps 1, 2, 3 (they launch the motif's kernels more often" in s.detail
    assert "outside the motif" not in s.detail
