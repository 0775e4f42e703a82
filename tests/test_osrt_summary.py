"""api --osrt, the OS runtime summary (`nsys stats --report osrt_sum`), on a tiny export
built by code: queries/osrt_summary.sql against its golden CSV (checked here against the
figures computed from what the fixture put in, rounded as nsys's SQLite rounds: half away
from zero), the library's entry points, and the command line's output and errors."""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
from conftest import run_cli
from fixtures.builder import EVAL_PID, SCHEMAS, TRAIN_PID, Fixture, _Recorder, build_one_kernel
from queries.golden import GOLDEN, assert_golden

import tracelens
from tracelens.api import osrt_summary
from tracelens.errors import MissingDataError, UsageError


def build_osrt(dest_dir: str | Path, schema: str) -> Fixture:
    """OS runtime calls (OSRT_API, nsys -t osrt) of two processes beside one kernel: poll
    4 times on a loader thread (an even count: the median is the mean of the middle two;
    the mean ends in .25, which nsys rounds up), ioctl in both processes,
    pthread_cond_wait and sem_timedwait of equal totals (nsys leaves their order open;
    tracelens orders ties by name), one read (a single call: stddev 0), and nsys's marks
    of its OS runtime tracing (eventClass 31 'started', 32 'finished', of no duration) in
    each process, which osrt_sum leaves out."""
    r = _Recorder(schema)
    r.process(TRAIN_PID, "python train.py --epochs 1")
    r.process(EVAL_PID, "python eval.py")
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    for pid in (TRAIN_PID, EVAL_PID):
        r.osrt("OS runtime libraries profiling started", 900_000, 0, pid=pid, event_class=31)
    loader = TRAIN_PID + 7  # a data-loader thread of the training process
    for start, dur in ((1_000_000, 100_123), (1_200_000, 3_000), (1_300_000, 250_000),
                       (1_600_000, 7_006)):  # fmt: skip
        r.osrt("poll", start, dur, pid=TRAIN_PID, tid=loader)
    r.osrt("ioctl", 1_010_000, 12_345, pid=TRAIN_PID)
    r.osrt("ioctl", 1_030_000, 2_222, pid=TRAIN_PID)
    r.osrt("ioctl", 1_050_000, 1_501, pid=EVAL_PID)
    r.osrt("pthread_cond_wait", 1_100_000, 40_000, pid=TRAIN_PID)
    r.osrt("pthread_cond_wait", 1_150_000, 20_000, pid=TRAIN_PID)
    r.osrt("sem_timedwait", 1_100_000, 60_000, pid=EVAL_PID)
    r.osrt("read", 1_700_000, 1_024, pid=EVAL_PID)
    r.kernel("vectorAdd", 1_020_000, 5_000, pid=TRAIN_PID)
    for pid in (TRAIN_PID, EVAL_PID):
        r.osrt("OS runtime libraries profiling finished", 1_800_000, 0, pid=pid, event_class=32)
    return r.write(dest_dir, "osrt")


@pytest.fixture(scope="module", params=SCHEMAS)
def fx(request, tmp_path_factory) -> Fixture:
    return build_osrt(tmp_path_factory.mktemp("osrt"), request.param)


def _tenth(value: float) -> str:
    # SQLite's round(x, 1), which nsys's report uses: half away from zero
    return str(Decimal(repr(value)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def _expected_csv(fixture: Fixture, pid: int | None) -> str:
    """osrt_sum of the calls the fixture put in, computed here from its own record."""
    durations: dict[str, list[int]] = defaultdict(list)
    for row in fixture.expected.osrt:
        if row.event_class == 27 and pid in (None, row.pid):
            durations[row.name].append(row.end - row.start)
    whole = sum(sum(d) for d in durations.values())
    lines = ["time_pct,total_ns,calls,avg_ns,med_ns,min_ns,max_ns,stddev_ns,name"]
    for name, d in sorted(durations.items(), key=lambda kv: (-sum(kv[1]), kv[0])):
        stddev = statistics.stdev(d) if len(d) > 1 else 0.0
        figures = [_tenth(sum(d) * 100 / whole), sum(d), len(d), _tenth(sum(d) / len(d)),
                   _tenth(statistics.median(d)), min(d), max(d), _tenth(stddev), name]  # fmt: skip
        lines.append(",".join(str(f) for f in figures))
    return "\n".join(lines) + "\n"


CASES = {"two_processes": None, "one_process": EVAL_PID}


@pytest.mark.parametrize("case", sorted(CASES))
def test_osrt_summary_equals_its_golden(fx, case):
    assert_golden(fx.path, "osrt_summary", case, pid=CASES[case])


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_golden_is_what_the_fixture_put_in(fx, case):
    golden = (GOLDEN / f"osrt_summary__{case}.csv").read_text()
    assert golden == _expected_csv(fx, CASES[case])
    # the cases the fixture is made of are in it
    rows = list(csv.DictReader(io.StringIO(golden)))
    if CASES[case] is None:
        assert [r["name"] for r in rows] == [
            "poll", "pthread_cond_wait", "sem_timedwait", "ioctl", "read"]  # fmt: skip
        assert rows[0]["avg_ns"] == "90032.3" and rows[0]["med_ns"] == "53564.5"
        assert math.isclose(sum(float(r["time_pct"]) for r in rows), 100.0, abs_tol=0.3)


def test_osrt_processes_equals_its_golden(fx):
    assert_golden(fx.path, "osrt_processes", "two_processes")


def test_the_library_entry_points_agree(fx):
    with tracelens.open(fx.path) as trace:
        whole = osrt_summary(trace)
        assert trace.api(osrt=True).equals(whole)
        assert trace.api(osrt=True, pid=EVAL_PID).equals(osrt_summary(trace, pid=EVAL_PID))
        assert whole.columns == [
            "time_pct", "total_ns", "calls", "avg_ns", "med_ns", "min_ns", "max_ns",
            "stddev_ns", "name",
        ]  # fmt: skip
        assert trace.api(osrt=True, pid=4242).is_empty()
        with pytest.raises(UsageError) as caught:
            trace.api(exec=True, osrt=True)
    assert str(caught.value) == (
        "give exec or osrt, not both (CUDA API time per kernel, or OS runtime time)"
    )


def test_an_export_without_os_runtime_data_says_how_to_capture_it(tmp_path, capsys):
    path = build_one_kernel(tmp_path, "3.0.0").path
    with tracelens.open(path) as trace, pytest.raises(MissingDataError) as caught:
        trace.api(osrt=True)
    line = (
        f"{path}: no OS runtime API data (OSRT_API): capture it with nsys profile -t osrt "
        "(e.g. -t cuda,nvtx,osrt)"
    )
    assert str(caught.value) == line
    assert run_cli(["api", path, "--osrt"], capsys) == (3, "", f"tracelens: {line}\n")


def test_the_command_prints_the_summary(fx, capsys):
    rc, out, err = run_cli(["api", fx.path, "--osrt", "--format", "csv"], capsys)
    assert (rc, err) == (0, "")
    assert out == (GOLDEN / "osrt_summary__two_processes.csv").read_text()
    rc, out, err = run_cli(
        ["api", fx.path, "--osrt", "--pid", EVAL_PID, "--top", "2", "--timeunit", "us"], capsys
    )
    assert (rc, err) == (0, "")
    assert out == (
        f"api of {fx.path.name}: CPU time by OS runtime function\n"
        "\n"
        "  Time (%)   Total (us)   Calls   Avg (us)   Med (us)   Min (us)   Max (us)   "
        "StdDev (us)   Name\n"
        " " + "─" * 112 + "\n"
        "      96.0       60.000       1     60.000     60.000     60.000     60.000         "
        "0.000   sem_timedwait\n"
        "       2.4        1.501       1      1.501      1.501      1.501      1.501         "
        "0.000   ioctl\n"
        "\n"
        "2 of 3 rows\n"
    )


def test_the_command_writes_json_to_a_file(fx, tmp_path, capsys):
    target = tmp_path / "osrt.json"
    rc, out, err = run_cli(["api", fx.path, "--osrt", "-f", "json", "-o", target], capsys)
    assert (rc, out, err) == (0, "", "")
    rows = json.loads(target.read_text())
    assert [(r["name"], r["calls"], r["total_ns"]) for r in rows] == [
        ("poll", 4, 360_129), ("pthread_cond_wait", 2, 60_000), ("sem_timedwait", 1, 60_000),
        ("ioctl", 3, 16_068), ("read", 1, 1_024),
    ]  # fmt: skip


def test_an_empty_pid_says_which_processes_made_os_runtime_calls(fx, capsys):
    rc, out, err = run_cli(["api", fx.path, "--osrt", "--pid", "4242", "-f", "csv"], capsys)
    assert rc == 0
    assert out == "time_pct,total_ns,calls,avg_ns,med_ns,min_ns,max_ns,stddev_ns,name\n"
    assert err == (
        f"tracelens: no OS runtime calls of pid 4242; processes with OS runtime calls: "
        f"{TRAIN_PID}, {EVAL_PID}\n"
    )


def test_osrt_with_exec_is_a_usage_error(fx, capsys):
    line = "tracelens: give --exec or --osrt, not both (CUDA API time per kernel, or OS runtime time)\n"
    assert run_cli(["api", fx.path, "--osrt", "--exec"], capsys) == (2, "", line)
    # a usage error before the trace is read: even a file that is not there
    assert run_cli(["api", fx.path.parent / "absent.sqlite", "--exec", "--osrt"], capsys) == (
        2, "", line)  # fmt: skip


def test_the_help_tells_of_osrt(capsys):
    rc, out, _err = run_cli(["api", "--help"], capsys)
    assert rc == 0
    flat = " ".join(out.split())
    assert "--osrt" in flat and "nsys stats --report osrt_sum" in flat
