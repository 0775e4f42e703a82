"""A loop whose iteration changes shape part-way through the capture: a, b, c six times,
then a, b, c, d (a kernel added from some step on). The exact period (a, b, c) held the
first seven 'steps', the seventh cut before its d, and the later iterations were left out
as 'kernels outside complete periods' (with six of each, the exact period a, b, c, d left
the first six out). They are steps of the motif with d as an optional launch
(steps_motif.changed_shape), searched when the exact steps leave a period's worth of
launches out, and taken when the longer steps are consecutive from some step on (or up to
some step) and repeat."""

from __future__ import annotations

import pytest

import tracelens
from tracelens.synth import TraceBuilder

US = 1_000


def build(path, shapes: list[str]):
    """One iteration per item of ``shapes`` (its kernels' letters), each kernel 20 µs,
    launched 25 µs apart, 50 µs more between iterations."""
    b = TraceBuilder("3.24.18")
    b.process(9, "python train.py")
    b.gpu(0)
    t = 1_000 * US
    for shape in shapes:
        for name in shape:
            c = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 2 * US, pid=9)
            b.kernel(f"void {name}(float*)", start=t + 3 * US, end=t + 23 * US, pid=9,
                     correlation_id=c)  # fmt: skip
            t += 25 * US
        t += 50 * US
    return str(b.write(path))


@pytest.mark.parametrize("later", [4, 6])
def test_the_iterations_after_the_change_are_steps(tmp_path, later):
    path = build(tmp_path / "t.sqlite", ["abc"] * 6 + ["abcd"] * later)
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps()
    assert steps.detail.startswith(
        f"{6 + later} steps from the period of the kernel launch sequence (device 0: a motif "
        f"of 3 kernels, exactly in 6 of its {6 + later} steps, with void d(float*) too in "
        f"{later})"
    ), steps.detail
    assert steps.frame["kernels"].to_list() == [3] * 6 + [4] * later
    assert steps.motif == {0: ("void a(float*)", "void b(float*)", "void c(float*)")}


@pytest.mark.parametrize(
    ("shapes", "detail"),
    [
        (
            ["abc"] * 10 + ["ab"],
            "10 steps from the period of the kernel launch sequence "
            "(device 0: a motif of 3 kernels (2 kernels outside complete periods))",
        ),
        # a new shape that does not repeat: no step of it
        (
            ["abc"] * 8 + ["abcde"] * 2,
            "9 steps from the period of the kernel launch sequence "
            "(device 0: a motif of 3 kernels (7 kernels outside complete periods))",
        ),
        # leading iterations that launch more are warm-up, not a shape the loop had
        (
            ["abcd"] * 3 + ["abc"] * 8,
            "11 steps from the period of the kernel launch sequence "
            "(device 0: a motif of 3 kernels); warm-up: steps 1, 2, 3 (they also launch kernels "
            "outside the motif: void d(float*); set aside)",
        ),
    ],
    ids=["cut short", "two of a new shape", "warm-up"],
)
def test_a_loop_that_keeps_its_shape_keeps_its_steps(tmp_path, shapes, detail):
    path = build(tmp_path / "t.sqlite", shapes)
    with tracelens.open(path, cache=False) as trace:
        assert trace.steps().detail == detail
