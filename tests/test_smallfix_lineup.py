"""tracelens lineup --by stream tells streams apart by device and process: a stream id is a
stream's only within one device and process, and stream 7 of GPU 0 and stream 7 of GPU 1
(or of two processes) were one row. Where every stream is of one device and process the
output is what it was (the stream id alone)."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from queries.golden import assert_golden

import tracelens
from tracelens.lineup import category_summary, unclassified_kernels
from tracelens.synth import TraceBuilder

GEMM = "ampere_sgemm_128x64_nn"


def _launch(b: TraceBuilder, name: str, start: int, dur: int, *, pid: int, device: int,
            stream: int = 7) -> None:  # fmt: skip
    c = b.runtime("cudaLaunchKernel_v7000", start=start - 500, end=start - 100, pid=pid)
    b.kernel(name, start=start, end=start + dur, correlation_id=c, pid=pid, device=device,
             stream=stream)  # fmt: skip


@pytest.fixture
def two_gpus(tmp_path):
    """Stream 7 on GPU 0 and on GPU 1 of process 100, and stream 7 of process 200 on GPU 1:
    three streams numbered 7. GPU 1's stream of process 100 also runs stream 9."""
    b = TraceBuilder("3.23.3")
    b.process(100, "python train.py")
    b.process(200, "python eval.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3", cuda_device=0)
    b.gpu(1, "NVIDIA H100 80GB HBM3", cuda_device=1)
    _launch(b, GEMM, 10_000, 4_000, pid=100, device=0)
    _launch(b, "my_other_kernel", 20_000, 1_000, pid=100, device=0)
    _launch(b, GEMM, 10_000, 3_000, pid=100, device=1)
    _launch(b, GEMM, 30_000, 2_000, pid=100, device=1, stream=9)
    _launch(b, "my_other_kernel", 10_000, 500, pid=200, device=1)
    b.memcpy("HtoD", 1 << 20, start=5_000, end=6_000, pid=100, device=1)
    path = tmp_path / "two_gpus.sqlite"
    b.write(path)
    return path


@pytest.fixture
def one_gpu(tmp_path):
    """Streams 7 and 9 of one process on one GPU."""
    b = TraceBuilder("3.23.3")
    b.process(100, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3", cuda_device=0)
    _launch(b, GEMM, 10_000, 4_000, pid=100, device=0)
    _launch(b, "my_other_kernel", 20_000, 1_000, pid=100, device=0, stream=9)
    b.memcpy("HtoD", 1 << 20, start=5_000, end=6_000, pid=100, device=0)
    path = tmp_path / "one_gpu.sqlite"
    b.write(path)
    return path


def test_the_library_keeps_a_row_per_device_process_and_stream(two_gpus):
    with tracelens.open(two_gpus, cache=False) as trace:
        df = category_summary(trace, by="stream", subfamily=False)
    assert df.columns[:4] == ["device", "pid", "stream", "category"]
    rows = [(r["device"], r["pid"], r["stream"], r["category"], r["calls"], r["total_ns"])
            for r in df.iter_rows(named=True)]  # fmt: skip
    assert rows == [
        (0, 100, 7, "gemm", 1, 4_000),
        (0, 100, 7, "other", 1, 1_000),
        (1, 100, 7, "gemm", 1, 3_000),
        (1, 100, 7, "memory", 1, 1_000),
        (1, 100, 9, "gemm", 1, 2_000),
        (1, 200, 7, "other", 1, 500),
    ]


def test_unclassified_kernels_per_stream(two_gpus):
    with tracelens.open(two_gpus, cache=False) as trace:
        df = unclassified_kernels(trace, by="stream")
    assert df.select("device", "pid", "stream", "calls", "total_ns").rows() == [
        (0, 100, 7, 1, 1_000),
        (1, 200, 7, 1, 500),
    ]


def test_the_table_shows_device_and_process_of_each_stream(two_gpus, capsys):
    rc, out, err = run_cli(
        ["--no-cache", "lineup", str(two_gpus), "--by", "stream", "--no-subfamily"], capsys
    )
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert set(lines.pop(3).strip()) == {"─"}  # the rule under the header
    assert lines == [
        "lineup of two_gpus.sqlite: GPU time by category",
        "",
        "  Device   PID   Stream   Category   Subfamily   Time (%)   Total (ns)   Calls   Avg (ns)   Top kernel (ns)   Top kernel",
        "       0   100        7   gemm                       34.8        4,000       1    4,000.0             4,000   ampere_sgemm_128x64_nn",
        "       0   100        7   other                       8.7        1,000       1    1,000.0             1,000   my_other_kernel",
        "       1   100        7   gemm                       26.1        3,000       1    3,000.0             3,000   ampere_sgemm_128x64_nn",
        "       1   100        7   memory                      8.7        1,000       1    1,000.0             1,000   [CUDA memcpy HtoD]",
        "       1   100        9   gemm                       17.4        2,000       1    2,000.0             2,000   ampere_sgemm_128x64_nn",
        "       1   200        7   other                       4.3          500       1      500.0               500   my_other_kernel",
        "",
        "6 category rows over 4 streams; Time (%) = share of 11,500 ns of GPU time (kernels + memcpy + memset)",
    ]  # fmt: skip


def test_csv_and_json_carry_the_three_ids(two_gpus, capsys):
    args = ["--no-cache", "lineup", str(two_gpus), "--by", "stream", "--no-subfamily"]
    _, out, _ = run_cli([*args, "-f", "csv"], capsys)
    assert out.splitlines()[0].startswith("device,pid,stream,category,subfamily,")
    assert out.splitlines()[6].startswith("1,200,7,other,,")
    _, out, _ = run_cli([*args, "-f", "json"], capsys)
    first = json.loads(out)[0]
    assert (first["device"], first["pid"], first["stream"]) == (0, 100, 7)


def test_show_other_keeps_the_top_names_per_stream(two_gpus, capsys):
    _, out, _ = run_cli(
        ["--no-cache", "lineup", str(two_gpus), "--by", "stream", "--show-other", "--top", "1",
         "-f", "csv"], capsys,
    )  # fmt: skip
    lines = out.splitlines()
    assert lines[0].startswith("device,pid,stream,time_pct,")
    assert [line.split(",")[:3] for line in lines[1:]] == [["0", "100", "7"], ["1", "200", "7"]]


def test_one_device_and_process_prints_the_stream_alone(one_gpu, capsys):
    rc, out, _ = run_cli(
        ["--no-cache", "lineup", str(one_gpu), "--by", "stream", "--no-subfamily", "-f", "csv"],
        capsys,
    )
    assert rc == 0
    assert out.splitlines() == [
        "stream,category,subfamily,time_pct,total_ns,calls,avg_ns,top_kernel_ns,top_kernel",
        f"7,gemm,,66.7,4000,1,4000.0,4000,{GEMM}",
        "7,memory,,16.7,1000,1,1000.0,1000,[CUDA memcpy HtoD]",
        "9,other,,16.7,1000,1,1000.0,1000,my_other_kernel",
    ]
    _, out, _ = run_cli(["--no-cache", "lineup", str(one_gpu), "--by", "stream"], capsys)
    assert out.splitlines()[2].split()[:2] == ["Stream", "Category"]
    assert out.splitlines()[-1].startswith("3 category rows over 2 streams;")


def test_lineup_activities_by_stream_equals_its_golden(two_gpus):
    no_filter = dict(device=None, pid=None, stream=None, start_ns=None, end_ns=None,
                     selection=None)  # fmt: skip
    assert_golden(two_gpus, "lineup_activities", "two_gpus_by_stream", by="stream",
                  name_kind="short", **no_filter)  # fmt: skip
