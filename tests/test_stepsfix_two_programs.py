"""Period steps of two unrelated programs, each on its own GPU: device 0's loop (a
training job) and device 1's (another program, other kernels) were numbered alike, so
step 3 was both devices' third iteration and util --step 3 spanned both programs' work.
The steps are the loop that did the most kernel time (with the devices that run the same
loop: the ranks of one job); another program's loop is named in the detail, not numbered
(``[period] same_loop_min_shared`` in data/steps.toml)."""

from __future__ import annotations

import pytest
from conftest import run_cli
from fixtures.builder import FILL, NCCL_SENDRECV, REDUCE_SUM, XMMA_GEMM
from test_advutil_steps import LOOP, OTHER, STEP, launch
from test_util_listed import add_context

import tracelens
from tracelens.synth import TraceBuilder


def build(path, other_kernels, other_pid=OTHER, contexts=False):
    """LOOP on device 0: 10 iterations of a 5 µs GEMM and a 1 µs fill, one every 10 µs;
    ``other_pid`` on device 1: 6 iterations of ``other_kernels`` (1 µs each), one every 7 µs,
    starting 3 µs later. ``contexts``: the export lists each process's CUDA context on its
    device (the step search then reads no launch's process)."""
    b = TraceBuilder("3.0.0")
    b.process(LOOP, "python train.py")
    b.process(OTHER, "python other.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    b.gpu(1, "NVIDIA H100 80GB HBM3")
    if contexts:
        add_context(b, LOOP, 0, 1)
        add_context(b, other_pid, 1, 2)
    for i in range(10):
        t = 10_000 + i * STEP
        launch(b, LOOP, t - 100, XMMA_GEMM, t, t + 5_000, 7)
        launch(b, LOOP, t - 90, FILL, t + 5_000, t + 6_000, 7)
    for i in range(6):
        t = 13_000 + i * 7_000
        for j, name in enumerate(other_kernels):
            at = t + j * 1_000
            cid = b.runtime("cudaLaunchKernel_v7000", start=at - 100, end=at - 95, pid=other_pid)
            b.kernel(name, start=at, end=at + 1_000, pid=other_pid, device=1, stream=9,
                     correlation_id=cid)  # fmt: skip
    return b.write(path)


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    return build(tmp_path_factory.mktemp("stepsfix") / "two.sqlite", (NCCL_SENDRECV, REDUCE_SUM))


@pytest.fixture(scope="module")
def two_listed(tmp_path_factory):
    path = tmp_path_factory.mktemp("stepsfix") / "listed.sqlite"
    return build(path, (NCCL_SENDRECV, REDUCE_SUM), contexts=True)


@pytest.mark.parametrize("which", ["two", "two_listed"])
def test_the_other_programs_loop_is_not_numbered(request, which):
    two = request.getfixturevalue(which)
    with tracelens.open(two, cache=False) as trace:
        steps = trace.steps()
    assert steps.method == "period", steps.detail
    assert steps.detail == (
        "10 steps from the period of the kernel launch sequence (device 0: a motif of 2 "
        "kernels); not in the steps: the loop on device 1, another program's (a motif of 2 "
        "kernels, none of them the steps', in 6 steps holding 12.00 µs of GPU time, less than "
        "the steps' 60.00 µs)"
    )
    assert steps.frame["device"].unique().to_list() == [0]
    assert list(steps.motif) == [0]


def test_util_of_a_step_is_one_programs_work(two, capsys):
    rc, out, _ = run_cli(["util", two, "--step", "3", "-f", "csv"], capsys)
    assert rc == 0
    header, row = out.splitlines()
    got = dict(zip(header.split(","), row.split(","), strict=True))
    assert {k: got[k] for k in ("span_ns", "busy_ns")} == {"span_ns": "6000", "busy_ns": "6000"}


@pytest.mark.parametrize(
    ("kernels", "pid", "contexts"),
    [
        ((XMMA_GEMM, FILL), OTHER, False),
        ((NCCL_SENDRECV, REDUCE_SUM), LOOP, False),
        ((NCCL_SENDRECV, REDUCE_SUM), LOOP, True),
    ],
    ids=["same kernels", "same process", "same process, contexts listed"],
)
def test_devices_of_one_loop_share_the_numbers(tmp_path, kernels, pid, contexts):
    """Device 1 running the loop's own kernels (a second rank of the job, fewer iterations
    captured), or other kernels launched by the loop's own process, keeps its steps,
    numbered as device 0's."""
    path = build(tmp_path / "t.sqlite", kernels, pid, contexts)
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps()
    assert sorted(steps.frame["device"].unique().to_list()) == [0, 1]
    assert "not in the steps" not in steps.detail
