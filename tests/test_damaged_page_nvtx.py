"""A damaged page of the CUDA API calls' table read by the NVTX sweep (`nvtx --gpu`,
`nvtx --kernels`, `fingerprint`, which read the calls with DuckDB directly, not through
Trace.query), or of NVTX_EVENTS read into the NVTX text table (`nvtx`, `timeline`), is 'is
corrupt (database disk image is malformed)', one line, exit 2, as every other read of the
file says it: it was 'internal error: Error: database disk image is malformed ... please
report it' (found by damaging random pages of shared exports)."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import run_cli

from tracelens.synth import TraceBuilder

PID = 100


def _build(tmp_path_factory, table: str):
    b = TraceBuilder("3.25.0")
    b.gpu(0)
    b.process(PID, "python train.py")
    t = 10_000
    for step in range(20):
        start = t
        for _ in range(100):
            cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 2_000, pid=PID, tid=PID)
            b.kernel("void k(float*)", start=t + 3_000, end=t + 5_000, pid=PID,
                     correlation_id=cid)  # fmt: skip
            t += 6_000
        b.nvtx_range(f"step {step}", start=start - 500, end=t, pid=PID, tid=PID)
        for i in range(100):  # enough ranges for NVTX_EVENTS to span several pages
            b.nvtx_range(f"op {step}.{i}", start=start + i * 6_000, end=start + i * 6_000 + 2_500,
                         pid=PID, tid=PID)  # fmt: skip
    path = b.write(tmp_path_factory.mktemp("damaged") / "t.sqlite")
    con = sqlite3.connect(path)
    # a leaf in the middle of the table (in key order): opening the file reads its first
    # rows and the largest rowid, which would meet a first or last page before the sweep
    leaves = [
        row[0]
        for row in con.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path",
            (table,),
        )
    ]
    assert len(leaves) >= 5
    page = leaves[len(leaves) // 2]
    page_size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    with open(path, "r+b") as f:  # the leaf page's header: no b-tree page type any more
        f.seek((page - 1) * page_size)
        f.write(b"\xff" * 12)
    return path


@pytest.fixture(scope="module")
def damaged_calls(tmp_path_factory):
    return _build(tmp_path_factory, "CUPTI_ACTIVITY_KIND_RUNTIME")


@pytest.fixture(scope="module")
def damaged_nvtx(tmp_path_factory):
    return _build(tmp_path_factory, "NVTX_EVENTS")


@pytest.mark.parametrize(
    "args", [["nvtx", "--gpu"], ["nvtx", "--kernels"], ["fingerprint", "-o", "-"]]
)
def test_the_sweep_says_the_file_is_corrupt(damaged_calls, args, capsys, monkeypatch):
    _corrupt(damaged_calls, args, capsys, monkeypatch)


@pytest.mark.parametrize("args", [["nvtx"], ["timeline"]])
def test_the_nvtx_text_says_the_file_is_corrupt(damaged_nvtx, args, capsys, monkeypatch):
    _corrupt(damaged_nvtx, args, capsys, monkeypatch)


def _corrupt(damaged, args, capsys, monkeypatch):
    monkeypatch.setenv("TRACELENS_NO_CACHE", "1")
    code, out, err = run_cli([args[0], damaged, *args[1:]], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"tracelens: {damaged}: is corrupt (database disk image is malformed); copy or "
        "export it again\n"
    )
