"""The api command and its neighbours agree (review8 minor): an API call whose nameId StringIds
lacks is '<unknown string id N>' in api, timeline --api and stakeout alike (timeline gave it an
empty name), and `api --pid N` for a process without work says why on stderr, as every
command does (it printed 0 rows and nothing else)."""

from __future__ import annotations

import csv
import io

import pytest
from conftest import run_cli

from tracelens.synth import TraceBuilder, global_tid

PID = 10
UNKNOWN = 99_999


@pytest.fixture
def trace_path(tmp_path):
    b = TraceBuilder("3.25.0")
    b.process(PID, "python x.py")
    b.process(20, "python y.py")
    b.gpu(0)
    c = b.runtime("cudaLaunchKernel_v7000", start=1_000, end=2_000, pid=PID)
    b.kernel("void kA(float*)", start=3_000, end=4_000, pid=PID, correlation_id=c)
    b.add_row("CUPTI_ACTIVITY_KIND_RUNTIME", start=5_000, end=6_000, eventClass=0,
              globalTid=global_tid(PID, PID), correlationId=c + 1, nameId=UNKNOWN,
              returnValue=0)  # fmt: skip
    b.kernel("void kB(float*)", start=7_000, end=9_000, pid=PID, correlation_id=c + 1)
    c = b.runtime("cudaLaunchKernel_v7000", start=1_500, end=2_500, pid=20)
    b.kernel("void kA(float*)", start=4_000, end=5_000, pid=20, correlation_id=c)
    return b.write(tmp_path / "names.sqlite")


def _rows(out: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(out)))


def test_an_unknown_api_name_reads_alike_everywhere(trace_path, capsys):
    name = f"<unknown string id {UNKNOWN}>"
    code, out, _ = run_cli(["api", trace_path, "-f", "csv"], capsys)
    assert code == 0 and name in {r["name"] for r in _rows(out)}
    code, out, _ = run_cli(["timeline", trace_path, "--api", "-f", "csv", "--limit", "0"], capsys)
    api_rows = [r for r in _rows(out) if r["kind"] == "api"]
    assert code == 0 and sorted(r["name"] for r in api_rows) == sorted(
        ["cudaLaunchKernel", "cudaLaunchKernel", name]
    )
    code, out, _ = run_cli(["stakeout", trace_path, "kB", "-f", "csv"], capsys)
    assert code == 0 and [r["api"] for r in _rows(out)] == [name]


@pytest.mark.parametrize(
    ("exec_", "why"),
    [
        # the API summary by the processes that made calls (advcmds), --exec by GPU work
        ([], "no CUDA API calls of pid 99; processes with CUDA API calls: 10, 20"),
        (["--exec"], "no GPU work on pid 99; processes present: 10, 20"),
    ],
)
def test_api_for_a_process_without_work_says_why(trace_path, capsys, exec_, why):
    code, out, err = run_cli(["api", trace_path, "--pid", "99", *exec_, "-f", "csv"], capsys)
    assert code == 0
    assert len(out.strip().splitlines()) == 1  # the header only
    assert err == f"tracelens: {why}\n"
    code, out, err = run_cli(["api", trace_path, "--pid", "20", *exec_, "-f", "csv"], capsys)
    assert code == 0 and len(out.strip().splitlines()) == 2 and err == ""
