"""A Parquet directory whose kernel table lacks a column every kernel row needs (`start`) is
refused by every command that reads kernels, in one line with census's exit code (review8
minor: census refused it, but timeline and nvtx --gpu exited 0 with every kernel silently
gone: the views read the missing column as NULL). An export without any kernel table is not
refused where kernels are optional (timeline)."""

from __future__ import annotations

import pytest
from conftest import run_cli
from test_inputs import write_parquetdir

from tracelens.synth import TraceBuilder

PID = 10


def _export(path, *, kernels: bool = True):
    b = TraceBuilder("3.25.0")
    b.process(PID, "python x.py")
    b.gpu(0)
    b.nvtx_range("step", start=1_000, end=50_000, pid=PID)
    c = b.runtime("cudaLaunchKernel_v7000", start=2_000, end=3_000, pid=PID)
    if kernels:
        b.kernel("void kA(float*)", start=4_000, end=9_000, pid=PID, correlation_id=c)
    c = b.runtime("cudaMemcpyAsync_v3020", start=10_000, end=11_000, pid=PID)
    b.memcpy("HtoD", 4096, start=12_000, end=13_000, pid=PID, correlation_id=c)
    return b.write(path)


@pytest.fixture(scope="module")
def without_start(tmp_path_factory):
    import pyarrow.parquet as pq

    root = tmp_path_factory.mktemp("missing_start")
    directory = write_parquetdir(_export(root / "x.sqlite"), root / "pq")
    kernels = directory / "CUPTI_ACTIVITY_KIND_KERNEL.parquet"
    pq.write_table(pq.read_table(kernels).drop(["start"]), kernels)
    return directory


COMMANDS = [
    ["census"],
    ["timeline"],
    ["timeline", "--limit", "0"],
    ["nvtx", "--gpu"],
    ["nvtx", "--gpu", "--each"],
    ["nvtx", "--kernels"],
    ["stakeout", "kA"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_kernel_table_without_start_is_refused_alike(without_start, capsys, args):
    code, out, err = run_cli([args[0], without_start, *args[1:], "--no-cache"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"tracelens: {without_start}: uses an nsys export schema tracelens does not support "
        "(kernel table lacks start); export it again with nsys 2020.5 or newer\n"
    )


def test_an_export_without_kernels_still_has_a_timeline(tmp_path, capsys):
    directory = write_parquetdir(_export(tmp_path / "x.sqlite", kernels=False), tmp_path / "pq")
    code, out, err = run_cli(["timeline", directory, "-f", "csv", "--no-cache"], capsys)
    assert (code, err) == (0, "")
    assert [line.split(",")[2] for line in out.splitlines()[1:]] == ["nvtx", "memcpy"]
