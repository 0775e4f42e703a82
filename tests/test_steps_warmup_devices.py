"""Warm-up iterations known from what they launch are set aside per device. Each device's
launch sequence is searched on its own, so step N of a device is its Nth iteration; the
union over devices set aside device 0's first three steady iterations because device 1
autotuned in its first three (and device 0's steps 1 to 3 did not count in the median).

Fixture: one process, device 0 runs 20 iterations of a, b, c, d (115 us each), device 1
3 iterations that also launch 6 autotuning probes, then the same 20 (test_steps_motif's
kernels)."""

from __future__ import annotations

import polars as pl
import pytest
from conftest import run_cli
from test_steps_motif import BASE, PROBES, US

import tracelens
from tracelens.synth import TraceBuilder


def build(path, per_device, spacing=5 * US):
    b = TraceBuilder("3.24.18")
    b.process(9, "python train.py")
    for device in per_device:
        b.gpu(device)
    for device, iterations in per_device.items():
        t = 1_000 * US
        for kernels in iterations:
            for name, dur in kernels:
                c = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 2 * US, pid=9)
                start = t + 3 * US
                b.kernel(f"void {name}(float*)", start=start, end=start + dur, pid=9,
                         device=device, correlation_id=c)  # fmt: skip
                t += dur + spacing
            t += 50 * US
    return str(b.write(path))


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    path = tmp_path_factory.mktemp("warmdev") / "warm.sqlite"
    return build(path, {0: [BASE] * 20, 1: [PROBES + BASE] * 3 + [BASE] * 20})


def test_warm_up_is_set_aside_on_its_device(warm):
    """Fails on the old code: device 0's steps 1 to 3 were warm-up too."""
    with tracelens.open(warm) as trace:
        steps = trace.steps()
    flags = steps.frame.filter(pl.col("warmup")).select("device", "step").rows()
    assert flags == [(1, 1), (1, 2), (1, 3)]
    assert "; warm-up: device 1: steps 1, 2, 3 (they also launch kernels outside the motif: " in (
        steps.detail
    )
    assert steps.detail.endswith("and 3 more; set aside; none on device 0)")
    # the steps with a warm-up row are counted as before; the steady rows are device 0's 20
    # iterations and device 1's last 20, all 115 us
    assert steps.summary()["warmup_steps"] == [1, 2, 3] and steps.figures()["warmup_steps"] == 3
    assert steps.steady.height == 40 and steps.median_ns == 115 * US and steps.std_ns == 0


def test_the_same_warm_up_on_every_device_reads_as_before(tmp_path):
    path = build(tmp_path / "both.sqlite", {d: [PROBES + BASE] * 3 + [BASE] * 20 for d in (0, 1)})
    with tracelens.open(path) as trace:
        steps = trace.steps()
    assert steps.summary()["warmup_steps"] == [1, 2, 3]
    assert steps.frame.filter(pl.col("warmup")).height == 6
    assert "; warm-up: steps 1, 2, 3 (they also launch kernels outside the motif: " in steps.detail


def test_the_steady_state_starts_after_every_devices_warm_up(warm, capsys):
    """census --per-step without --steps: steps 4 to 23 (a step number is one selection over
    the devices: device 1's step 3 is warm-up)."""
    rc, out, err = run_cli(["census", warm, "--no-cache", "--per-step", "-f", "csv"], capsys)
    assert rc == 0, err
    assert "per step: the GPU work of steps 4 to 23 of 23, divided by 20 (" in err
    assert "warm-up steps 1, 2, 3 set aside" in err
    assert "autotune_probe" not in out
