"""Kernels that all last 0 ns: a share of a 0 ns total is 0.0 % in every format (as lineup
prints it), not NaN, an empty CSV cell or a JSON null; and findings' gpu_low_util gives
nsys's row there (the whole range at 0.0 %), though util sees no GPU work."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

import tracelens
from tracelens.findings import find_issues
from tracelens.synth import TraceBuilder
from tracelens.util import gpu_time_accounting

PID = 4242
KERNEL = "void fill<float>(float *, int)"


@pytest.fixture(scope="module")
def zero(tmp_path_factory):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    for i in range(50):
        start = 10_000 + i * 1_000
        cid = b.runtime("cudaLaunchKernel_v7000", start=start - 500, end=start - 400)
        b.kernel(KERNEL, start=start, end=start, pid=PID, correlation_id=cid, stream=7)
    path = tmp_path_factory.mktemp("zero") / "zero.sqlite"
    b.write(path)
    return path


def test_census_share_of_no_time_is_zero_in_every_format(zero, capsys):
    _, out, _ = run_cli(["census", zero, "--no-cache"], capsys)
    assert out.splitlines()[4].split()[:2] == ["0.0", "0"]
    _, out, _ = run_cli(["census", zero, "--no-cache", "--format", "csv"], capsys)
    assert out.splitlines()[1].startswith("0.0,0,50,")
    _, out, _ = run_cli(["census", zero, "--no-cache", "--format", "json"], capsys)
    assert json.loads(out)[0]["time_pct"] == 0.0


def test_findings_low_use_window_where_util_has_no_work_is_nsys_row(zero):
    # nsys analyze 2022.4's gpu-low-util on this export: its whole range at 0.0 %
    with tracelens.open(zero, cache=False) as tr:
        assert gpu_time_accounting(tr).frame.is_empty()
        found = find_issues(tr, only=("gpu_low_util",))
        rows = found.result("gpu_low_util").frame.rows()
        assert rows == [(0.0, 49_000, 10_000, PID, 0, 1)]
