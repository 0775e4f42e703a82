"""A capture of one profiled iteration: one ProfilerStep#N range around 12 transformer
layers. The marker route wanted two marker steps, so the launch period was searched and
took the 12 repeated layers inside the one step for 12 steps ("12 steps from the period of
the kernel launch sequence"). One marker range is now the step when its kernels hold most
of the kernel time ([markers] single_min_coverage); one marker among many unmarked
iterations still leaves the steps to the launch period."""

from __future__ import annotations

import pytest
from conftest import run_cli

import tracelens
from tracelens.synth import TraceBuilder

US = 1_000
LAYER = ("void gemm(float*)", "void attn(float*)", "void gemm2(float*)")


def _iteration(b, t, marker: str | None):
    """One iteration at ``t``: embed, 12 layers, optimizer; 40 us between launches."""
    names = ["void embed(float*)", *LAYER * 12, "void opt(float*)"]
    if marker:
        b.nvtx_range(marker, start=t, end=t + len(names) * 40 * US + 10 * US, pid=10, tid=10)
    for i, name in enumerate(names):
        at = t + 5 * US + i * 40 * US
        cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 5 * US, pid=10, tid=10)
        b.kernel(name, start=at + 15 * US, end=at + 45 * US, pid=10, correlation_id=cid)


def _build(path, iterations: int, marked: int):
    b = TraceBuilder("3.25.0")
    b.process(10, "python train.py")
    b.gpu(0)
    for i in range(iterations):
        _iteration(b, 1_000 * US + i * 3_000 * US, f"ProfilerStep#{i}" if i == marked else None)
    return b.write(path)


def test_one_profiled_iteration_is_one_step_not_its_layers(tmp_path, capsys):
    path = _build(tmp_path / "one.sqlite", iterations=1, marked=0)
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps()
    assert (steps.method, steps.count) == ("marker", 1)
    assert steps.detail == "1 step from 1 NVTX range 'ProfilerStep#*' (step markers)"
    assert steps.frame["kernels"].to_list() == [38]
    rc, out, err = run_cli(["steps", path, "--no-cache"], capsys)
    assert rc == 0, err
    assert "steady state (1 step): median 1.51 ms" in out


@pytest.mark.parametrize("iterations", [4, 10])
def test_one_marker_among_unmarked_iterations_leaves_them_to_the_period(tmp_path, iterations):
    path = _build(tmp_path / "many.sqlite", iterations=iterations, marked=1)
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps()
    assert steps.method == "period" and steps.count == iterations, steps.detail
