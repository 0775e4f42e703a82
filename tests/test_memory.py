"""memory equals `nsys stats` (2022.4 gpumemtimesum / gpumemsizesum) on every real trace,
value for value; equals an independent computation on built exports; output pinned."""

from __future__ import annotations

import csv
import json
import math
import statistics

import pytest
from conftest import REFERENCE, needs_shared, run_cli, shared_traces

import tracelens

MEMORY_TRACES = [
    p.stem for p in shared_traces() if (REFERENCE / f"{p.stem}_gpumemtimesum.csv").exists()
]
LABELS = {"HtoD", "DtoH", "DtoD", "PtoP"}


def _reference(stem: str, report: str) -> list[dict[str, str]]:
    with open(REFERENCE / f"{stem}_{report}.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@needs_shared
def test_every_trace_with_memory_ops_has_references():
    assert len(MEMORY_TRACES) >= 7, MEMORY_TRACES
    for stem in MEMORY_TRACES:
        assert (REFERENCE / f"{stem}_gpumemsizesum.csv").exists(), stem


@needs_shared
@pytest.mark.parametrize("stem", MEMORY_TRACES)
def test_time_equals_nsys_gpumemtimesum(stem, trace_copies):
    with tracelens.open(trace_copies[stem]) as trace:
        df = trace.memory_time()
    ours = [
        (
            f"{r['time_pct']:.1f}",
            str(r["total_ns"]),
            str(r["count"]),
            f"{r['avg_ns']:.1f}",
            f"{r['med_ns']:.1f}",
            str(r["min_ns"]),
            str(r["max_ns"]),
            f"{r['stddev_ns']:.1f}",
            r["operation"],
        )
        for r in df.iter_rows(named=True)
    ]
    ref = [
        (
            r["Time (%)"],
            r["Total Time (ns)"],
            r["Count"],
            r["Avg (ns)"],
            r["Med (ns)"],
            r["Min (ns)"],
            r["Max (ns)"],
            r["StdDev (ns)"],
            r["Operation"],
        )
        for r in _reference(stem, "gpumemtimesum")
    ]
    assert ours == ref


@needs_shared
@pytest.mark.parametrize("stem", MEMORY_TRACES)
def test_size_equals_nsys_gpumemsizesum(stem, trace_copies):
    with tracelens.open(trace_copies[stem]) as trace:
        df = trace.memory_size()
    ours = [
        (
            f"{r['total_mb']:.3f}",
            str(r["count"]),
            f"{r['avg_mb']:.3f}",
            f"{r['med_mb']:.3f}",
            f"{r['min_mb']:.3f}",
            f"{r['max_mb']:.3f}",
            f"{r['stddev_mb']:.3f}",
            r["operation"],
        )
        for r in df.iter_rows(named=True)
    ]
    ref = [
        (
            r["Total (MB)"],
            r["Count"],
            r["Avg (MB)"],
            r["Med (MB)"],
            r["Min (MB)"],
            r["Max (MB)"],
            r["StdDev (MB)"],
            r["Operation"],
        )
        for r in _reference(stem, "gpumemsizesum")
    ]
    # Equal totals (gaussian: 134,234,112 bytes each way) are ordered by operation, which
    # is also the order nsys printed them in.
    assert ours == ref


@needs_shared
def test_unified_memory_is_labelled_by_copy_kind(trace_copies):
    # copyKind 11/12 (both migration causes) -> the Unified Memory labels, counts summed.
    with tracelens.open(trace_copies["nsys2022.2_unified_memory"]) as trace:
        df = trace.memory_time()
    assert dict(zip(df["operation"], df["count"], strict=True)) == {
        "[CUDA Unified Memory memcpy HtoD]": 3072,
        "[CUDA Unified Memory memcpy DtoH]": 1536,
    }


def _round(x: float, places: int) -> float:
    """Half away from zero, as SQLite's ROUND (and nsys) do."""
    f = 10**places
    return math.copysign(math.floor(abs(x) * f + 0.5) / f, x)


def _expected_rows(ops: dict[str, list[int]], by: str) -> list[tuple]:
    rows = []
    grand = sum(sum(v) for v in ops.values())
    for op, values in ops.items():
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        if by == "time":
            stats = (statistics.mean(values), statistics.median(values), sd)
            rows.append(
                (
                    _round(sum(values) * 100 / grand, 1),
                    sum(values),
                    len(values),
                    *(_round(s, 1) for s in stats),
                    min(values),
                    max(values),
                    op,
                )
            )
        else:
            stats = (sum(values), statistics.mean(values), statistics.median(values))
            rows.append(
                (
                    *(_round(s / 1e6, 3) for s in stats),
                    _round(min(values) / 1e6, 3),
                    _round(max(values) / 1e6, 3),
                    _round(sd / 1e6, 3),
                    sum(values),
                    len(values),
                    op,
                )
            )
    return sorted(rows)


@pytest.mark.parametrize("schema", ["2.9.1", "3.0.0", "3.25.0"])
def test_built_exports_equal_an_independent_computation(schema, tmp_path):
    builder = pytest.importorskip("fixtures.builder")
    fx = builder.build_mixed(tmp_path, schema)
    times: dict[str, list[int]] = {}
    sizes: dict[str, list[int]] = {}
    for c in fx.expected.memcpys:
        assert c.kind in LABELS
        times.setdefault(f"[CUDA memcpy {c.kind}]", []).append(c.end - c.start)
        sizes.setdefault(f"[CUDA memcpy {c.kind}]", []).append(c.bytes)
    for m in fx.expected.memsets:
        times.setdefault("[CUDA memset]", []).append(m.end - m.start)
        sizes.setdefault("[CUDA memset]", []).append(m.bytes)
    with tracelens.open(fx.path) as trace:
        t = trace.memory_time()
        s = trace.memory_size()
    ours_t = sorted(
        (
            r["time_pct"],
            r["total_ns"],
            r["count"],
            r["avg_ns"],
            r["med_ns"],
            r["stddev_ns"],
            r["min_ns"],
            r["max_ns"],
            r["operation"],
        )
        for r in t.iter_rows(named=True)
    )
    assert ours_t == _expected_rows(times, "time")
    ours_s = sorted(
        (
            r["total_mb"],
            r["avg_mb"],
            r["med_mb"],
            r["min_mb"],
            r["max_mb"],
            r["stddev_mb"],
            r["total_bytes"],
            r["count"],
            r["operation"],
        )
        for r in s.iter_rows(named=True)
    )
    assert ours_s == _expected_rows(sizes, "size")
    assert t["total_ns"].to_list() == sorted(t["total_ns"].to_list(), reverse=True)
    assert s["total_bytes"].to_list() == sorted(s["total_bytes"].to_list(), reverse=True)


def test_filters_device_pid_and_window(tmp_path):
    builder = pytest.importorskip("fixtures.builder")
    fx = builder.build_mixed(tmp_path, "3.25.0")
    x = fx.expected
    from tracelens.filters import EventFilter

    with tracelens.open(fx.path) as trace:
        dev1 = trace.memory_time(where=EventFilter(device=1))
        eval_ = trace.memory_size(where=EventFilter(pid=builder.EVAL_PID))
        first = min(c.start for c in x.memcpys)
        window = trace.memory_time(where=EventFilter(start_ns=first, end_ns=first + 1))
        empty = trace.memory_time(where=EventFilter(start_ns=first, end_ns=first))
    assert dev1["count"].sum() == sum(c.device == 1 for c in x.memcpys) + sum(
        m.device == 1 for m in x.memsets
    )
    assert eval_["total_bytes"].sum() == sum(
        c.bytes for c in x.memcpys if c.pid == builder.EVAL_PID
    ) + sum(m.bytes for m in x.memsets if m.pid == builder.EVAL_PID)
    # the window [first, first + 1) keeps exactly the copy that starts there; [first, first)
    # holds nothing (nsys's rule: an event starting at the window's end is out)
    assert window["count"].to_list() == [1]
    assert empty.is_empty()


def _tiny(tmp_path):
    synth = pytest.importorskip("tracelens.synth")
    b = synth.TraceBuilder("3.25.0")
    b.process(4242, "python tiny.py")
    b.memcpy("HtoD", 4_000_000, start=1_000, end=401_000)
    b.memcpy("HtoD", 2_000_000, start=500_000, end=700_000)
    b.memcpy("DtoH", 1_500, start=800_000, end=802_500)
    b.memset(1_048_576, start=900_000, end=903_001)
    return b.write(tmp_path / "tiny.sqlite")


def test_table_is_exact(tmp_path, capsys):
    path = _tiny(tmp_path)
    rc, out, err = run_cli(["memory", path], capsys)
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "memory of tiny.sqlite: GPU time by operation",
        "",
        "  Time (%)   Total (ns)   Count    Avg (ns)    Med (ns)   Min (ns)   Max (ns)   StdDev (ns)   Operation",
        " " + "─" * 114,
        "      99.1      600,000       2   300,000.0   300,000.0    200,000    400,000     141,421.4   [CUDA memcpy HtoD]",
        "       0.5        3,001       1     3,001.0     3,001.0      3,001      3,001           0.0   [CUDA memset]",
        "       0.4        2,500       1     2,500.0     2,500.0      2,500      2,500           0.0   [CUDA memcpy DtoH]",
        "",
        "3 operations",
    ]


def test_size_table_is_exact(tmp_path, capsys):
    path = _tiny(tmp_path)
    rc, out, err = run_cli(["memory", path, "--by", "size"], capsys)
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "memory of tiny.sqlite: bytes by operation (MB = 10^6 bytes)",
        "",
        "  Total (MB)   Count   Avg (MB)   Med (MB)   Min (MB)   Max (MB)   StdDev (MB)   Total (bytes)   Operation",
        " " + "─" * 117,
        "       6.000       2      3.000      3.000      2.000      4.000         1.414       6,000,000   [CUDA memcpy HtoD]",
        "       1.049       1      1.049      1.049      1.049      1.049         0.000       1,048,576   [CUDA memset]",
        "       0.002       1      0.002      0.002      0.002      0.002         0.000           1,500   [CUDA memcpy DtoH]",
        "",
        "3 operations",
    ]


def test_csv_json_and_units(tmp_path, capsys):
    path = _tiny(tmp_path)
    rc, out, _ = run_cli(["memory", path, "-f", "csv", "--timeunit", "us"], capsys)
    assert rc == 0
    assert out == (
        "time_pct,total_us,count,avg_us,med_us,min_us,max_us,stddev_us,operation\n"
        "99.1,600.0,2,300.0,300.0,200.0,400.0,141.4214,[CUDA memcpy HtoD]\n"
        "0.5,3.001,1,3.001,3.001,3.001,3.001,0.0,[CUDA memset]\n"
        "0.4,2.5,1,2.5,2.5,2.5,2.5,0.0,[CUDA memcpy DtoH]\n"
    )
    rc, out, _ = run_cli(["memory", path, "-f", "json", "--by", "size"], capsys)
    assert rc == 0
    assert json.loads(out)[0] == {
        "total_mb": 6.0,
        "count": 2,
        "avg_mb": 3.0,
        "med_mb": 3.0,
        "min_mb": 2.0,
        "max_mb": 4.0,
        "stddev_mb": 1.414,
        "total_bytes": 6000000,
        "operation": "[CUDA memcpy HtoD]",
    }
    rc, out, _ = run_cli(["memory", path, "-f", "markdown", "--by", "size"], capsys)
    assert out.splitlines()[2:5] == [
        "| Total (MB) | Count | Avg (MB) | Med (MB) | Min (MB) | Max (MB) | StdDev (MB) | Total (bytes) | Operation |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :--- |",
        "| 6.000 | 2 | 3.000 | 3.000 | 2.000 | 4.000 | 1.414 | 6,000,000 | `[CUDA memcpy HtoD]` |",
    ]


def test_window_keeps_nothing_is_an_empty_table(tmp_path, capsys):
    path = _tiny(tmp_path)
    rc, out, err = run_cli(["memory", path, "-f", "csv", "--start", "2ms"], capsys)
    assert (rc, err) == (
        0,
        "tracelens: window from 2.00 ms is outside the trace's span 1.00 µs–903.0 µs from "
        "session start\n",
    )
    assert out == "time_pct,total_ns,count,avg_ns,med_ns,min_ns,max_ns,stddev_ns,operation\n"


@needs_shared
def test_no_memory_data_is_exit_3(trace_copies, capsys):
    rc, out, err = run_cli(["memory", trace_copies["nsys2021.3_cpu_only_no_cuda"]], capsys)
    assert (rc, out) == (3, "")
    assert err == (
        "tracelens: " + str(trace_copies["nsys2021.3_cpu_only_no_cuda"]) + ": no CUDA memcpy or "
        "memset data: was it captured with -t cuda?\n"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--by", "speed"], "tracelens: unknown --by 'speed'; use one of: time, size\n"),
        (
            ["--format", "xml"],
            "tracelens: unknown --format 'xml'; use one of: table, csv, json, markdown\n",
        ),
        (["--start", "later"], "tracelens: --start 'later' is not a time; use a number"),
    ],
)
def test_bad_options(args, message, tmp_path, capsys):
    path = _tiny(tmp_path)
    rc, out, err = run_cli(["memory", path, *args], capsys)
    assert (rc, out) == (2, "")
    assert err.startswith(message) and err.count("\n") == 1


def test_bad_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.sqlite"
    bad.write_text("hello")
    rc, out, err = run_cli(["memory", bad], capsys)
    assert (rc, out) == (2, "")
    assert err.endswith(
        "bad.sqlite: is not a SQLite database; pass the file written by `nsys export --type sqlite`\n"
    )


def test_demo_traces(capsys):
    demo = pytest.importorskip("tracelens.demo")
    for name in ("bs1", "bs16"):
        with tracelens.open(demo.demo_path(name)) as trace:
            if not trace.has_table("CUPTI_ACTIVITY_KIND_MEMCPY"):
                continue
            df = trace.memory_time()
        rc, out, err = run_cli(["memory", "--demo", name, "-f", "csv"], capsys)
        assert (rc, err) == (0, "")
        assert out.count("\n") == df.height + 1


def _copy_and_replay(path):
    """One HtoD copy (20 us) and, later, a 500 us CUDA graph replay traced at graph level
    (whose copies the export does not list)."""
    from fixtures.builder import add_graph_replays

    from tracelens.synth import TraceBuilder, global_pid

    b = TraceBuilder("3.24.18")
    b.process(7, "python app.py")
    b.gpu(0)
    cid = b.runtime("cudaMemcpy_v3020", start=1_000_000, end=1_030_000, pid=7)
    b.memcpy("HtoD", 1 << 20, start=1_005_000, end=1_025_000, correlation_id=cid, pid=7)
    cid = b.runtime("cudaGraphLaunch_v10000", start=2_000_000, end=2_010_000, pid=7)
    b.write(path)
    add_graph_replays(path, [(2_050_000, 2_550_000, 0, 1, None, 7, cid, global_pid(7), 1, 1)])
    return path


def test_copies_beside_graph_replays_say_the_replays_hide_theirs(tmp_path, capsys):
    """The copies the export lists are summed, and a note says the graph-level replays'
    copies are not (as census says of their kernels); before, nothing said so. A window
    without the replay has no note."""
    path = _copy_and_replay(tmp_path / "copies.sqlite")
    note = (
        "1 CUDA graph replay traced at graph level lists no copies or memsets: those it ran "
        "are not in these numbers; profile with --cuda-graph-trace=node to see them"
    )
    rc, out, err = run_cli(["memory", path], capsys)
    assert rc == 0 and err == "" and "[CUDA memcpy HtoD]" in out
    assert out.endswith(f"\nnote: {note}\n")
    rc, out, err = run_cli(["memory", path, "--by", "size", "-f", "csv"], capsys)
    assert rc == 0 and err == f"tracelens: note: {note}\n" and "note" not in out
    rc, out, err = run_cli(["memory", path, "--end", "1.5ms"], capsys)
    assert rc == 0 and err == "" and "note:" not in out
