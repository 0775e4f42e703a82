"""tracelens info counts the OS runtime calls (OSRT_API, nsys -t osrt) and points to
`tracelens api --osrt`: an export holding only those calls read as if nothing had been
captured. The calls are not in the span (what every Start column counts from); an export
without OSRT_API prints what it printed before."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from queries.golden import assert_golden

import tracelens
from tracelens.synth import TraceBuilder


def _osrt_only(path) -> None:
    """Three OS runtime calls of one process (and nsys's marks of where its OS runtime
    tracing started and finished, class 31 and 32, which are no calls), nothing else."""
    b = TraceBuilder("3.23.3")
    b.process(100, "python serve.py")
    b.osrt_call("OS runtime libraries profiling started", start=500, end=500, pid=100,
                event_class=31)  # fmt: skip
    b.osrt_call("poll", start=1_000, end=5_000, pid=100)
    b.osrt_call("ioctl", start=6_000, end=8_000, pid=100)
    b.osrt_call("read", start=9_000, end=9_500, pid=100)
    b.osrt_call("OS runtime libraries profiling finished", start=20_000, end=20_000, pid=100,
                event_class=32)  # fmt: skip
    b.write(path)


def _with_kernel(path) -> None:
    """An OS runtime call before and one after the CUDA activity (a call and its kernel)."""
    b = TraceBuilder("3.23.3")
    b.process(100, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3", cuda_device=0)
    b.osrt_call("poll", start=100, end=900, pid=100)
    c = b.runtime("cudaLaunchKernel_v7000", start=1_000, end=2_000, pid=100)
    b.kernel("k", start=3_000, end=4_000, correlation_id=c, pid=100)
    b.osrt_call("pthread_cond_wait", start=5_000, end=90_000, pid=100)
    b.write(path)


def _lines_from(out: str, key: str) -> list[str]:
    lines = out.splitlines()
    return lines[next(i for i, line in enumerate(lines) if line.startswith(key)) :]


def test_an_export_of_only_os_runtime_calls_says_so(tmp_path, capsys):
    path = tmp_path / "osrt.sqlite"
    _osrt_only(path)
    rc, out, err = run_cli(["--no-cache", "info", str(path)], capsys)
    assert (rc, err) == (0, "")
    assert _lines_from(out, "span") == [
        "span       — → — (duration —, from session start)",
        "gpus       none described in the export",
        "processes  none with CUDA activity",
        "kernel     not captured (no table)",
        "memcpy     not captured (no table)",
        "memset     not captured (no table)",
        "runtime    not captured (no table)",
        "nvtx       not captured (no table)",
        "osrt       3 OS runtime calls (by function: tracelens api --osrt)",
    ]


@pytest.mark.parametrize("cached", [False, True])
def test_the_calls_are_counted_but_leave_the_span_alone(tmp_path, cached, cache_dir):
    path = tmp_path / "train.sqlite"
    _with_kernel(path)
    with tracelens.open(path, cache=cached) as trace:
        info = trace.info
        osrt = next(e for e in info.events if e.kind == "osrt")
        assert (osrt.table, osrt.present, osrt.count) == ("OSRT_API", True, 2)
        assert (osrt.first_ns, osrt.last_ns) == (100, 90_000)
        # the span is the CUDA activity's, as before (and the origin of Start columns)
        assert (info.start_ns, info.end_ns) == (1_000, 4_000)
        assert trace.origin_ns == 1_000
        assert [p.pid for p in info.processes] == [100]


def test_the_command_line_shows_the_count_in_every_format(tmp_path, capsys):
    path = tmp_path / "train.sqlite"
    _with_kernel(path)
    _, table, _ = run_cli(["--no-cache", "info", str(path)], capsys)
    assert _lines_from(table, "span")[0] == (
        "span       1.00 µs → 4.00 µs (duration 3.00 µs, from session start)"
    )
    assert _lines_from(table, "nvtx") == [
        "nvtx       not captured (no table)",
        "osrt       2 OS runtime calls (by function: tracelens api --osrt)",
    ]
    _, md, _ = run_cli(["--no-cache", "info", str(path), "-f", "md"], capsys)
    assert md.endswith("| osrt | 2 OS runtime calls (by function: tracelens api --osrt) |\n")
    _, js, _ = run_cli(["--no-cache", "info", str(path), "-f", "json"], capsys)
    (osrt,) = [e for e in json.loads(js)["events"] if e["kind"] == "osrt"]
    assert osrt == {"kind": "osrt", "table": "OSRT_API", "present": True, "count": 2,
                    "first_ns": 100, "last_ns": 90_000}  # fmt: skip


def test_one_call_and_no_call(tmp_path, capsys):
    one, none = tmp_path / "one.sqlite", tmp_path / "none.sqlite"
    b = TraceBuilder("3.23.3")
    b.osrt_call("poll", start=1_000, end=5_000, pid=100)
    b.write(one)
    b = TraceBuilder("3.23.3")  # only nsys's mark that its OS runtime tracing started
    b.osrt_call("OS runtime libraries profiling started", start=1, end=1, pid=100,
                event_class=31)  # fmt: skip
    b.write(none)
    _, out, _ = run_cli(["--no-cache", "info", str(one)], capsys)
    assert (
        out.splitlines()[-1] == "osrt       1 OS runtime call (by function: tracelens api --osrt)"
    )
    _, out, _ = run_cli(["--no-cache", "info", str(none)], capsys)
    assert out.splitlines()[-1] == "osrt       0 OS runtime calls"


def test_an_export_without_os_runtime_calls_prints_no_osrt_line(tmp_path, capsys):
    path = tmp_path / "trace.sqlite"
    b = TraceBuilder("3.23.3")
    c = b.runtime("cudaLaunchKernel_v7000", start=1_000, end=2_000, pid=100)
    b.kernel("k", start=3_000, end=4_000, correlation_id=c, pid=100)
    b.write(path)
    _, out, _ = run_cli(["--no-cache", "info", str(path)], capsys)
    assert out.splitlines()[-1] == "nvtx       not captured (no table)"
    with tracelens.open(path, cache=False) as trace:
        osrt = next(e for e in trace.info.events if e.kind == "osrt")
    assert (osrt.present, osrt.count, osrt.first_ns) == (False, 0, None)


def test_info_osrt_calls_equals_its_golden(tmp_path):
    path = tmp_path / "osrt.sqlite"
    _osrt_only(path)
    assert_golden(path, "info_osrt_calls", "marks_left_out")
