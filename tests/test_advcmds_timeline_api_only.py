"""timeline of an export whose only events are CUDA API calls printed an empty table, 'no
rows (of 0)', with exit 0 and nothing on why: the calls are rows only with --api. Now it
says so on stderr, as an empty --pid says why (found by advcmds)."""

from __future__ import annotations

import pytest
from conftest import run_cli


@pytest.fixture
def api_only(tmp_path):
    synth = pytest.importorskip("tracelens.synth")
    b = synth.TraceBuilder("3.25.0")
    b.process(4242, "python alloc.py")
    b.runtime("cudaMalloc_v3020", start=1_000, end=5_000, pid=4242)
    b.runtime("cudaFree_v3020", start=9_000, end=9_500, pid=4242)
    return b.write(tmp_path / "alloc.sqlite")


@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_says_api_lists_the_calls(api_only, fmt, capsys):
    rc, out, err = run_cli(["timeline", api_only, "-f", fmt], capsys)
    assert rc == 0
    assert err == (
        "tracelens: no GPU work or NVTX range in alloc.sqlite, only 2 CUDA API calls: "
        "--api lists them\n"
    )


def test_with_api_the_calls_are_rows(api_only, capsys):
    rc, out, err = run_cli(["timeline", api_only, "--api", "-f", "csv"], capsys)
    assert (rc, err) == (0, "")
    assert [line.split(",")[2::8] for line in out.splitlines()[1:]] == [
        ["api", "cudaMalloc"],
        ["api", "cudaFree"],
    ]


def test_an_export_with_gpu_work_has_no_hint(tmp_path, capsys):
    synth = pytest.importorskip("tracelens.synth")
    b = synth.TraceBuilder("3.25.0")
    b.process(4242, "python k.py")
    b.kernel("k", start=1_000, end=2_000, pid=4242)
    rc, out, err = run_cli(["timeline", b.write(tmp_path / "k.sqlite"), "-f", "csv"], capsys)
    assert (rc, err) == (0, "")
    assert out.splitlines()[1].split(",")[2::8] == ["kernel", "k"]
