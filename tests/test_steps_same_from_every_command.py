"""The steps of a trace do not depend on which command searched first. `steps` reads each
launch's process; the diff, the report and the fingerprint handed the step search their own
read of the launches without it, so on a device two programs share their steps took the
other program's launches and copies (stepsfix's review), and, through a cache entry, the
first command to search kept its steps for every later one: `tracelens steps` after a
diff printed the diff's."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from fixtures.builder import FILL, NCCL_SENDRECV, XMMA_GEMM
from test_advutil_steps import LOOP, OTHER, STEP, launch

from tracelens.synth import TraceBuilder


def shared_gpu(path):
    """A loop (8 iterations: a 5 µs GEMM, a 1 µs fill, its own 0.5 µs copy, every 10 µs) and
    another program on the same device: 5 times a 3 µs SendRecv then a 6 µs copy, every
    17 µs."""
    b = TraceBuilder("3.0.0")
    b.process(LOOP, "python train.py")
    b.process(OTHER, "python other.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    for i in range(8):
        t = 10_000 + i * STEP
        launch(b, LOOP, t - 100, XMMA_GEMM, t, t + 5_000, 7)
        launch(b, LOOP, t - 90, FILL, t + 5_000, t + 6_000, 7)
        launch(b, LOOP, t - 80, "copy", t + 6_000, t + 6_500, 7)
    for i in range(5):
        t = 12_345 + i * 17_000
        launch(b, OTHER, t - 100, NCCL_SENDRECV, t, t + 3_000, 9)
        launch(b, OTHER, t - 90, "copy", t + 3_000, t + 9_000, 9)
    return b.write(path)


def _steps(path, capsys, *cache):
    code, out, err = run_cli(["steps", path, "-f", "json", "--kernels", "0", *cache], capsys)
    assert code == 0, err
    doc = json.loads(out)
    return doc["detail"], doc["steps"]


@pytest.mark.parametrize(
    "first",
    [
        ["diff", "{t}", "{t}", "-f", "json"],
        ["report", "{t}", "-o", "{dir}/page.html"],
        ["fingerprint", "{t}", "-o", "{dir}/fp.json"],
    ],
    ids=["diff", "report", "fingerprint"],
)
def test_steps_after_any_command_are_the_steps_own(tmp_path, capsys, cache_dir, first):
    path = shared_gpu(tmp_path / "t.sqlite")
    direct = _steps(path, capsys, "--no-cache")
    assert direct[0] == (
        "8 steps from the period of the kernel launch sequence (device 0: a motif of 2 "
        "kernels (the 5 launches of 1 other process on it, which run no such loop, in no step))"
    )
    assert [s["end_ns"] - s["start_ns"] for s in direct[1]] == [6_500] * 8  # its own copy
    args = [a.format(t=path, dir=tmp_path) for a in first]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    assert _steps(path, capsys) == direct  # read back from the cache entry the command kept
