"""Nested NVTX ranges with identical start and end (review8 B2). Of two identical ranges the
first (the smaller RangeId) is the parent, in the tree, the sweep that finds each call's
innermost range, stakeout's NVTX column and the fingerprint's regions alike; every one of
them holds the GPU work launched inside (nsys stats 2022.4 nvtxkernsum lists r0, r1, r2 each
holding kC). Before, the sweep's marks took any of the identical ranges as innermost, and
the ranges above it in the chain lost their work."""

from __future__ import annotations

import polars as pl
import pytest
from conftest import run_cli

import tracelens
from tracelens import nvtx
from tracelens.stakeout import stakeout
from tracelens.synth import TraceBuilder

PID = 10
US = 1000
KC = "void kC(float*)"


def _identical(path, n: int, *, crossing: bool = False):
    """r0..r{n-1} pushed in that order, all [500, 600] us, one launch at 550 us -> kC (the
    reviewer's gen_eqn.py). ``crossing``: a start/end range 'x' [100, 520] us crossing them
    on the same thread, so that the thread's ranges overlap (the tree's refit path)."""
    b = TraceBuilder("3.24.18")
    b.process(PID, "python x.py")
    b.gpu(0)
    if crossing:
        b.nvtx_range("x", start=100 * US, end=520 * US, pid=PID, event_type=60)
    for i in range(n):
        b.nvtx_range(f"r{i}", start=500 * US, end=600 * US, pid=PID)
    c = b.runtime("cudaLaunchKernel_v7000", start=550 * US, end=552 * US, pid=PID)
    b.kernel(KC, start=555 * US, end=565 * US, pid=PID, correlation_id=c)
    return b.write(path)


@pytest.mark.parametrize("n", [2, 3, 5, 20])
@pytest.mark.parametrize("crossing", [False, True])
def test_every_identical_range_holds_the_kernel(tmp_path, n, crossing):
    path = _identical(tmp_path / "eqn.sqlite", n, crossing=crossing)
    names = [f"r{i}" for i in range(n)]
    with tracelens.open(path, cache=False) as t:
        kernels = nvtx.kernels_by_range(t)
        projection = nvtx.gpu_projection(t).sort("level")
    # nvtxkernsum (ref/eqn3_nvtxkernsum.csv): each range, 1 instance of kC, 10,000 ns
    assert sorted(kernels["range"]) == sorted(names)
    assert set(kernels.select("kernels", "total_ns", "name").rows()) == {(1, 10_000, KC)}
    ranges = projection.filter(pl.col("name") != "x")
    assert ranges["name"].to_list() == names
    assert ranges["level"].to_list() == list(range(n))
    assert ranges["gpu_ops"].to_list() == [1] * n
    ids = ranges["range_id"].to_list()
    assert ranges["parent_id"].to_list()[1:] == ids[:-1]
    assert ranges["path"][-1] == " / ".join(names)


def test_innermost_of_identical_ranges_is_the_last(tmp_path, capsys):
    path = _identical(tmp_path / "eqn3.sqlite", 3)
    with tracelens.open(path, cache=False) as t:
        assert stakeout(t, "kC").launches["nvtx"].to_list() == ["r2"]
        nvtx.build_sweep(t)
        (innermost,) = t.db.execute("SELECT range_id FROM nvtx_call_ranges").fetchone()
        (name,) = t.db.execute(
            "SELECT name FROM nvtx_ranges() WHERE range_id = ?", [innermost]
        ).fetchone()
    assert name == "r2"
    code, out, _err = run_cli(["census", path, "--nvtx", "r2", "--format", "csv"], capsys)
    assert code == 0 and "kC" in out


def test_fingerprint_region_holds_every_identical_range(tmp_path):
    path = _identical(tmp_path / "eqn20.sqlite", 20)
    with tracelens.open(path, cache=False) as t:
        doc = tracelens.fingerprint(t)
    (region,) = {tuple(p["region"]) for p in doc["paths"]}
    # outermost first, in the tree's nesting order (not r0, r1, r10, r11, ..., r2)
    assert region == tuple(f"r{i}" for i in range(20))


def test_identical_ranges_beside_others(tmp_path):
    # review8 gen_eqnest.py: a shared start, a shared end, and three identical ranges
    b = TraceBuilder("3.24.18")
    b.process(PID, "python x.py")
    b.gpu(0)

    def launch(at_us, name):
        c = b.runtime("cudaLaunchKernel_v7000", start=at_us * US, end=at_us * US + 2 * US, pid=PID)
        b.kernel(f"void {name}(float*)", start=at_us * US + 5 * US, end=at_us * US + 15 * US,
                 pid=PID, correlation_id=c)  # fmt: skip

    b.nvtx_range("outer", start=100 * US, end=200 * US, pid=PID)
    b.nvtx_range("inner", start=100 * US, end=150 * US, pid=PID)
    launch(120, "kA")
    b.nvtx_range("outer2", start=300 * US, end=400 * US, pid=PID)
    b.nvtx_range("inner2", start=350 * US, end=400 * US, pid=PID)
    launch(370, "kB")
    for name in ("outer3", "mid3", "inner3"):
        b.nvtx_range(name, start=500 * US, end=600 * US, pid=PID)
    launch(550, "kC")
    with tracelens.open(b.write(tmp_path / "eqnest.sqlite"), cache=False) as t:
        rows = nvtx.gpu_projection(t).select("name", "gpu_ops", "level", "children").rows()
        held = nvtx.kernels_by_range(t).select("range", "kernels").rows()
    assert sorted(rows) == sorted(
        [("outer", 1, 0, 1), ("inner", 1, 1, 0), ("outer2", 1, 0, 1), ("inner2", 1, 1, 0),
         ("outer3", 1, 0, 1), ("mid3", 1, 1, 1), ("inner3", 1, 2, 0)]
    )  # fmt: skip
    # ref/eqnest_nvtxkernsum.csv
    assert sorted(held) == sorted(
        (name, 1) for name in ("inner", "inner2", "inner3", "mid3", "outer", "outer2", "outer3")
    )


def test_call_refit_takes_the_innermost_identical_range(tmp_path):
    # on a thread whose ranges overlap, a call that outlasts the range the marks give it is
    # placed by the refit join: of identical containers, the last (innermost)
    b = TraceBuilder("3.24.18")
    b.process(PID, "python x.py")
    b.gpu(0)
    b.nvtx_range("x", start=100 * US, end=520 * US, pid=PID, event_type=60)
    b.nvtx_range("r0", start=500 * US, end=600 * US, pid=PID)
    b.nvtx_range("r1", start=500 * US, end=600 * US, pid=PID)
    b.nvtx_range("short", start=540 * US, end=560 * US, pid=PID, event_type=60)
    c = b.runtime("cudaLaunchKernel_v7000", start=550 * US, end=570 * US, pid=PID)
    b.kernel(KC, start=575 * US, end=585 * US, pid=PID, correlation_id=c)
    with tracelens.open(b.write(tmp_path / "refit.sqlite"), cache=False) as t:
        rows = nvtx.gpu_projection(t).select("name", "gpu_ops", "level").rows()
        paths = nvtx.op_paths(t)["path"].to_list()
        assert stakeout(t, "kC").launches["nvtx"].to_list() == ["r1"]
    # (the projection counts the call in every range containing it on such a thread)
    assert sorted(rows) == [("r0", 1, 0), ("r1", 1, 1)]
    assert paths == ["r0 / r1"]
