"""An export with CUDA API calls and no GPU work (a program that only allocated, say: nsys
then writes no kernel, memcpy or memset table) was asked "was it captured with -t cuda?",
which its API calls answer: now the commands that need GPU work say CUDA was traced and
none ran, and where its calls are (found by advcmds)."""

from __future__ import annotations

import pytest
from conftest import run_cli

NONE_RAN = (
    "CUDA was traced and no kernel, copy or memset ran (it holds 3 CUDA API calls: "
    "see `tracelens api`)"
)


@pytest.fixture
def api_only(tmp_path):
    synth = pytest.importorskip("tracelens.synth")
    b = synth.TraceBuilder("3.25.0")
    b.process(4242, "python alloc.py")
    b.runtime("cudaMalloc_v3020", start=1_000, end=5_000, pid=4242)
    b.runtime("cudaMalloc_v3020", start=6_000, end=8_000, pid=4242)
    b.runtime("cudaFree_v3020", start=9_000, end=9_500, pid=4242)
    return b.write(tmp_path / "alloc.sqlite")


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["danger"], "no CUDA kernel data"),
        (["decode", "--trace"], "no CUDA kernel data"),
        (["api", "--exec"], "no CUDA kernel data"),
        (["memory"], "no CUDA memcpy or memset data"),
        (["lineup"], "no CUDA kernel, memcpy or memset data"),
    ],
)
def test_says_cuda_was_traced(api_only, args, what, capsys):
    rc, out, err = run_cli([*args, api_only], capsys)
    assert (rc, out) == (3, "")
    assert err == f"tracelens: {api_only}: {what}: {NONE_RAN}\n"


def test_one_call_is_one_call(tmp_path, capsys):
    synth = pytest.importorskip("tracelens.synth")
    b = synth.TraceBuilder("3.25.0")
    b.process(4242, "python init.py")
    b.runtime("cudaFree_v3020", start=1_000, end=5_000, pid=4242)
    path = b.write(tmp_path / "init.sqlite")
    rc, out, err = run_cli(["danger", path], capsys)
    assert (rc, out) == (3, "")
    assert err == (
        f"tracelens: {path}: no CUDA kernel data: CUDA was traced and no kernel, copy or "
        "memset ran (it holds 1 CUDA API call: see `tracelens api`)\n"
    )


def test_the_api_summary_still_lists_the_calls(api_only, capsys):
    rc, out, err = run_cli(["api", api_only, "--format", "csv"], capsys)
    assert (rc, err) == (0, "")
    assert out.splitlines()[1:] == [
        "92.3,6000,2,3000.0,3000.0,2000,4000,1414.2,cudaMalloc",
        "7.7,500,1,500.0,500.0,500,500,0.0,cudaFree",
    ]
