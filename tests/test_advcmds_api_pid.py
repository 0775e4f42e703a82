"""api --pid of a process without CUDA API calls said 'no GPU work on pid 5; processes
present: none' of an export whose process 4242 made CUDA API calls (the hint of the
kernel views, which counts GPU work): now it lists the processes with CUDA API calls, as
--osrt lists those with OS runtime calls (found by advcmds)."""

from __future__ import annotations

import pytest
from conftest import run_cli
from queries.golden import assert_golden


@pytest.fixture
def export(tmp_path):
    synth = pytest.importorskip("tracelens.synth")
    b = synth.TraceBuilder("3.25.0")
    b.process(4242, "python alloc.py")
    b.process(4343, "python other.py")
    b.runtime("cudaMalloc_v3020", start=1_000, end=5_000, pid=4242)
    b.runtime("cudaFree_v3020", start=6_000, end=7_000, pid=4343)
    return b.write(tmp_path / "alloc.sqlite")


def test_lists_the_processes_with_calls(export, capsys):
    rc, out, err = run_cli(["api", export, "--pid", "5", "-f", "csv"], capsys)
    assert (rc, out) == (0, "time_pct,total_ns,calls,avg_ns,med_ns,min_ns,max_ns,stddev_ns,name\n")
    assert (
        err == "tracelens: no CUDA API calls of pid 5; processes with CUDA API calls: 4242, 4343\n"
    )


def test_a_process_with_calls_has_no_hint(export, capsys):
    rc, out, err = run_cli(["api", export, "--pid", "4343", "-f", "csv"], capsys)
    assert (rc, err) == (0, "")
    assert out.splitlines()[1:] == ["100.0,1000,1,1000.0,1000.0,1000,1000,0.0,cudaFree"]


def test_api_processes_equals_its_golden(export):
    assert_golden(export, "api_processes", "two_processes")
