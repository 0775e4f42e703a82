"""timeline: every event of built exports and real traces in order, idle gaps computed
independently, copy labels, paging and windows; output pinned for a small case."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from conftest import imported_top_modules, needs_shared, run_cli, shared_traces
from test_stakeout import _small

import tracelens
from tracelens._resources import copy_kind_labels
from tracelens.filters import EventFilter

COPY_LABELS = copy_kind_labels()

LABEL = {k: f"[CUDA memcpy {k}]" for k in ("HtoD", "DtoH", "DtoD", "PtoP")}


def _gaps(intervals: dict[int, list[tuple[int, int]]], longer_than: int) -> set[tuple]:
    """(device, start, end) of idle stretches, from (start, end) of GPU work per device."""
    out = set()
    for device, spans in intervals.items():
        busy_until = None
        for start, end in sorted(spans):
            if busy_until is not None and start - busy_until > longer_than:
                out.add((device, busy_until, start))
            busy_until = end if busy_until is None else max(busy_until, end)
    return out


# -- the small case, pinned ---------------------------------------------------------------
def test_csv_is_exact(tmp_path, capsys):
    rc, out, err = run_cli(
        ["timeline", _small(tmp_path), "--api", "--gap", "20us", "-f", "csv"], capsys
    )
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "start_ns,duration_ns,kind,device,stream,pid,tid,correlation_id,bytes,throughput_gbps,name",
        "500,299500,nvtx,,,4242,4243,,,,worker loop",
        "1000,199000,nvtx,,,4242,4242,,,,epoch",
        "2000,58000,nvtx,,,4242,4242,,,,step 1",
        "10000,10000,nvtx,,,4242,4242,,,,bad \\xff text",
        "12000,2000,api,,,4242,4242,1,,,cudaLaunchKernel",
        '15000,10000,kernel,0,7,4242,,1,,,"void gemm<float>(float *, int)"',
        "30000,1000,api,,,4242,4242,2,,,cudaLaunchKernel",
        '30500,12000,kernel,0,7,4242,,2,,,"void gemm<float>(float *, int)"',
        "42500,37500,gap,0,,,,,,,idle",
        "50000,100000,nvtx,,,4242,4242,,,,io",
        "70000,20000,nvtx,,,4242,4242,,,,registered step",
        "75000,1000,api,,,4242,4242,3,,,cuLaunchKernel",
        "77000,500,api,,,5151,5151,3,,,cudaLaunchKernel",
        '80000,8000,kernel,0,9,4242,,3,,,"void gemm<float>(float *, int)"',
        "100000,1000,kernel,0,7,5151,,3,,,void gemm_small(float *)",
        "101000,79000,gap,0,,,,,,,idle",
        "160000,1000,api,,,4242,4243,4,,,cudaLaunchKernel",
        '162000,9000,kernel,1,7,4242,,4,,,"void gemm<float>(float *, int)"',
        "180000,1500,kernel,0,7,4242,,5,,,void relu(float *)",
    ]


def test_table_is_exact(tmp_path, capsys):
    rc, out, err = run_cli(["timeline", _small(tmp_path), "-n", "6", "--name", "short"], capsys)
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "timeline of small.sqlite (times from session start)",
        "",
        "  Start (ns)   Duration (ns)   Kind     Device   Stream    PID    TID   Correlation id   Bytes   Throughput (GB/s)   Name",
        " " + "─" * 137,
        "         500         299,500   nvtx          —        —   4242   4243                —       —                   —   worker loop",
        "       1,000         199,000   nvtx          —        —   4242   4242                —       —                   —   epoch",
        "       2,000          58,000   nvtx          —        —   4242   4242                —       —                   —   step 1",
        "      10,000          10,000   nvtx          —        —   4242   4242                —       —                   —   bad \\xff text",
        "      15,000          10,000   kernel        0        7   4242      —                1       —                   —   gemm",
        "      30,500          12,000   kernel        0        7   4242      —                2       —                   —   gemm",
        "",
        "rows 1-6 of 12; --offset 6 for the next",
    ]


def test_window_counts_from_session_start_and_keeps_spanning_gaps(tmp_path, capsys):
    rc, out, _ = run_cli(
        [
            "timeline",
            _small(tmp_path),
            "--gap",
            "20us",
            "--start",
            "75.5us",
            "--end",
            "100.5us",
            "-f",
            "csv",
            "--timeunit",
            "us",
        ],
        capsys,
    )
    assert rc == 0
    assert out.splitlines() == [
        "start_us,duration_us,kind,device,stream,pid,tid,correlation_id,bytes,throughput_gbps,name",
        "0.5,299.5,nvtx,,,4242,4243,,,,worker loop",
        "1.0,199.0,nvtx,,,4242,4242,,,,epoch",
        "42.5,37.5,gap,0,,,,,,,idle",  # begins before the window, ends in it
        "50.0,100.0,nvtx,,,4242,4242,,,,io",
        "70.0,20.0,nvtx,,,4242,4242,,,,registered step",
        '80.0,8.0,kernel,0,9,4242,,3,,,"void gemm<float>(float *, int)"',
        "100.0,1.0,kernel,0,7,5151,,3,,,void gemm_small(float *)",
    ]


def test_device_and_stream_select_gpu_rows_pid_selects_all(tmp_path):
    with tracelens.open(_small(tmp_path)) as trace:
        dev1 = trace.timeline(where=EventFilter(device=1)).events
        s9 = trace.timeline(where=EventFilter(stream=9), gap_ns=0).events
        other = trace.timeline(where=EventFilter(pid=5151), api=True).events
    assert dev1.filter(dev1["kind"] == "kernel")["device"].to_list() == [1]
    assert dev1.filter(dev1["kind"] == "nvtx").height == 6  # host side: kept
    assert s9.filter(s9["kind"] != "nvtx")["kind"].to_list() == ["kernel"]
    assert other["kind"].to_list() == ["api", "kernel"]


def test_gap_rows_of_a_stream_or_process_say_what_they_are(tmp_path, capsys):
    """With --stream/--pid a gap row is a stretch without that work, not an idle device
    (another stream may run then): one note says so (review8: 'gap, device 0, idle' while
    device 0 ran another stream's kernel); none without those filters or gap rows."""
    path = str(_small(tmp_path))
    note = (
        "tracelens: note: gap rows are stretches without GPU work of {}; other streams "
        "or processes may run on the device then\n"
    )
    cases = (
        (["--stream", "7"], "stream 7"),
        (["--pid", "4242"], "pid 4242"),
        (["--stream", "7", "--limit", "0"], "stream 7"),  # every row: a polars frame
    )
    for flags, what in cases:
        rc, out, err = run_cli(["timeline", path, *flags, "--gap", "1us", "-f", "csv"], capsys)
        assert rc == 0 and ",gap," in out
        assert err == note.format(what)
    rc, out, err = run_cli(["timeline", path, "--gap", "1us", "-f", "csv"], capsys)
    assert (rc, err) == (0, "") and ",gap," in out
    rc, out, err = run_cli(["timeline", path, "--stream", "7", "-f", "csv"], capsys)
    assert (rc, err) == (0, "") and ",gap," not in out  # no gap row: nothing to explain


def test_paging(tmp_path):
    with tracelens.open(_small(tmp_path)) as trace:
        full = trace.timeline(api=True, gap_ns=20_000)
        page = trace.timeline(api=True, gap_ns=20_000, limit=5, offset=7)
        past = trace.timeline(api=True, gap_ns=20_000, limit=5, offset=100)
        # a million rows deep (was an internal error: DuckDB's min(x, n) takes n < 10^6)
        deep = trace.timeline(api=True, gap_ns=20_000, limit=5, offset=1_000_000)
    assert full.total == full.events.height == 19
    assert page.total == 19 and page.events.rows() == full.events.slice(7, 5).rows()
    assert past.total == 19 and past.events.height == 0
    assert deep.total == 19 and deep.events.height == 0


def test_one_row_is_one_row(tmp_path, capsys):
    """The caption and the summary count a single row in the singular."""
    path = _small(tmp_path)
    _, out, _ = run_cli(["timeline", path, "--limit", "1"], capsys)
    assert "rows 1-1 of" in out
    with tracelens.open(path) as trace:
        one = trace.timeline(limit=1)
        assert one._summary().startswith("1 row of ")
        first = trace.timeline(limit=1).events["start_ns"][0]
    # the window ends 1 ns after the first row starts (a row starting at --end is out)
    _, out, _ = run_cli(["timeline", path, "--end", str(first + 1), "--limit", "0"], capsys)
    lines = out.rstrip().splitlines()
    assert lines[-1].strip() == "1 row", out


def test_color_by_kind_only_on_a_terminal(tmp_path, capsys, monkeypatch):
    path = _small(tmp_path)
    rc, out, _ = run_cli(["timeline", path, "-n", "6"], capsys)
    assert "\x1b[" not in out
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    rc, out, _ = run_cli(["timeline", path, "-n", "6"], capsys)
    assert rc == 0
    lines = out.splitlines()
    assert "\x1b[35m" in lines[4]  # nvtx: magenta
    assert "\x1b[32m" in next(line for line in lines if "gemm" in line)  # kernel: green


@pytest.mark.parametrize(
    "args, message",
    [
        (["--gap", "soon"], "tracelens: --gap 'soon' is not a time; use a number"),
        (["--limit", "-2"], "tracelens: --limit must be 0 (every row) or more (got -2)"),
        (["--offset", "-1"], "tracelens: --offset must be 0 or more (got -1)"),
        (["--start", "2ms", "--end", "1ms"], "tracelens: --end (1000000 ns) is before --start"),
        (["--name", "x"], "tracelens: unknown --name 'x'; use one of: demangled, short, mangled"),
        (["-f", "xml"], "tracelens: unknown --format 'xml'; use one of: table, csv, json"),
    ],
)
def test_bad_options(args, message, tmp_path, capsys):
    rc, out, err = run_cli(["timeline", _small(tmp_path), *args], capsys)
    assert (rc, out) == (2, "")
    assert err.startswith(message) and err.count("\n") == 1, err


@needs_shared
def test_nothing_captured_is_exit_3(trace_copies, capsys):
    path = trace_copies["nsys2021.3_cpu_only_no_cuda"]
    rc, out, err = run_cli(["timeline", path], capsys)
    assert (rc, out) == (3, "")
    assert err == (
        f"tracelens: {path}: no CUDA or NVTX events: was it captured with -t cuda,nvtx?\n"
    )


# -- built exports ------------------------------------------------------------------------
@pytest.mark.parametrize("schema", ["2.9.1", "3.0.0", "3.25.0"])
def test_built_exports_every_event(schema, tmp_path):
    builder = pytest.importorskip("fixtures.builder")
    fx = builder.build_mixed(tmp_path, schema)
    x = fx.expected
    with tracelens.open(fx.path) as trace:
        t = trace.timeline(api=True, gap_ns=5_000)
        has_enum = trace.has_table("ENUM_CUDA_MEMCPY_OPER")
    assert has_enum == (schema != "2.9.1")  # labels from the export, or built in: the same
    o = t.origin_ns
    ev = t.events
    assert ev["start_ns"].to_list() == sorted(ev["start_ns"].to_list())
    got = {
        kind: sorted(ev.filter(ev["kind"] == kind).drop("kind").rows())
        for kind in ("kernel", "memcpy", "memset", "nvtx", "api", "gap")
    }
    assert got["kernel"] == sorted(
        (k.start - o, k.duration, k.device, k.stream, k.pid, None, k.correlation_id, None, None,
         builder.display(k.name))
        for k in x.kernels
    )  # fmt: skip
    assert got["memcpy"] == sorted(
        (c.start - o, c.end - c.start, c.device, 7, c.pid, None, c.correlation_id, c.bytes,
         round(c.bytes / (c.end - c.start), 3), LABEL[c.kind])
        for c in x.memcpys
    )  # fmt: skip
    assert got["memset"] == sorted(
        (m.start - o, m.end - m.start, m.device, 7, m.pid, None, m.correlation_id, m.bytes,
         round(m.bytes / (m.end - m.start), 3), "memset")
        for m in x.memsets
    )  # fmt: skip
    assert got["nvtx"] == sorted(
        (n.start - o, n.end - n.start, None, None, builder.TRAIN_PID, builder.TRAIN_PID, None,
         None, None, builder.display(n.text))
        for n in x.nvtx if n.end is not None
    )  # fmt: skip
    assert len(got["api"]) == len(x.runtime)
    spans: dict[int, list[tuple[int, int]]] = {}
    for e in [*x.kernels, *x.memcpys, *x.memsets]:
        spans.setdefault(e.device, []).append((e.start, e.end))
    expected_gaps = _gaps(spans, 5_000)
    assert expected_gaps, "the fixture should have idle stretches"
    assert {(g[2], g[0] + o, g[0] + g[1] + o) for g in got["gap"]} == expected_gaps
    assert t.total == sum(len(v) for v in got.values())


def test_copy_labels_come_from_the_export(tmp_path):
    synth = pytest.importorskip("tracelens.synth")
    b = synth.TraceBuilder("3.25.0")
    b.process(1, "x")
    b.memcpy(11, 4096, start=100, end=200)
    b.memcpy(13, 4096, start=300, end=400)
    path = b.write(tmp_path / "uvm.sqlite")
    with tracelens.open(path) as trace:
        names = trace.timeline().events["name"].to_list()
    assert names == ["[CUDA Unified Memory memcpy HtoD]", "[CUDA Unified Memory memcpy DtoD]"]
    assert COPY_LABELS[11] == "[CUDA Unified Memory memcpy HtoD]"


# -- real traces --------------------------------------------------------------------------
CUDA_TRACES = [p.stem for p in shared_traces() if "cpu_only" not in p.stem]


@needs_shared
@pytest.mark.parametrize("stem", CUDA_TRACES)
def test_real_traces_every_gpu_event_and_gap(stem, trace_copies):
    path = trace_copies[stem]
    with tracelens.open(path) as trace:
        t = trace.timeline(limit=0)
        origin = t.origin_ns
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    spans: dict[int, list[tuple[int, int]]] = {}
    counts = {}
    for kind, table in (
        ("kernel", "CUPTI_ACTIVITY_KIND_KERNEL"),
        ("memcpy", "CUPTI_ACTIVITY_KIND_MEMCPY"),
        ("memset", "CUPTI_ACTIVITY_KIND_MEMSET"),
        ("graph", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"),  # replays traced at graph level
    ):
        rows = (
            con.execute(f'SELECT deviceId, start, "end" FROM {table}').fetchall()
            if table in tables
            else []
        )
        counts[kind] = len(rows)
        for device, start, end in rows:
            spans.setdefault(device, []).append((start, end))
    con.close()
    ev = t.events
    for kind, n in counts.items():
        assert ev.filter(ev["kind"] == kind).height == n, kind
    gaps = ev.filter(ev["kind"] == "gap")
    assert {
        (d, s + origin, s + origin + dur)
        for s, dur, d in gaps.select("start_ns", "duration_ns", "device").rows()
    } == _gaps(spans, 100_000)
    assert ev["start_ns"].to_list() == sorted(ev["start_ns"].to_list())
    labels = set(ev.filter(ev["kind"] == "memcpy")["name"].to_list())
    assert labels <= set(COPY_LABELS.values()), labels


@needs_shared
def test_unified_memory_labels_without_enum_table(trace_copies, capsys):
    # nsys 2022.2 writes no ENUM_* tables: the built-in labels are used.
    rc, out, _ = run_cli(
        ["timeline", trace_copies["nsys2022.2_unified_memory"], "-n", "0", "-f", "json"], capsys
    )
    assert rc == 0
    names = {r["name"] for r in json.loads(out) if r["kind"] == "memcpy"}
    assert names == {"[CUDA Unified Memory memcpy HtoD]", "[CUDA Unified Memory memcpy DtoH]"}


def test_demo_trace(capsys):
    pytest.importorskip("tracelens.demo")
    rc, out, err = run_cli(
        ["timeline", "--demo", "bs16", "-n", "0", "-f", "json", "--gap", "1ms"], capsys
    )
    assert (rc, err) == (0, "")
    rows = json.loads(out)
    kinds = {r["kind"] for r in rows}
    assert {"kernel", "memcpy", "memset", "nvtx"} <= kinds
    assert {r["name"] for r in rows if r["kind"] == "nvtx"} >= {"prefill", "decode_step_1"}


def test_output_file(tmp_path, capsys):
    dest = tmp_path / "out.csv"
    rc, out, _ = run_cli(["timeline", _small(tmp_path), "-f", "csv", "-o", dest], capsys)
    assert (rc, out) == (0, "")
    assert Path(dest).read_text().startswith("start_ns,duration_ns,kind,")


def test_csv_and_json_say_on_stderr_when_rows_were_cut(tmp_path, capsys):
    """csv and json carry no caption: a page that is not every row says so on stderr, in the
    table caption's words (stdout stays only the rows); every row says nothing."""
    path = _small(tmp_path)
    _, table, _ = run_cli(["timeline", path, "-n", "6"], capsys)
    caption = "rows 1-6 of 12; --offset 6 for the next"
    assert caption in table  # the wording the note reuses
    for fmt in ("csv", "json"):
        rc, out, err = run_cli(["timeline", path, "-n", "6", "-f", fmt], capsys)
        assert (rc, err) == (0, f"tracelens: note: {caption}, --limit 0 for every row\n"), fmt
        rows = out.count("\n") - 1 if fmt == "csv" else len(json.loads(out))
        assert rows == 6, fmt
        rc, _, err = run_cli(["timeline", path, "-n", "0", "-f", fmt], capsys)
        assert (rc, err) == (0, ""), fmt
        rc, _, err = run_cli(["timeline", path, "-n", "6", "--offset", "10", "-f", fmt], capsys)
        assert (rc, err) == (0, "tracelens: note: rows 11-12 of 12\n"), fmt


@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_a_page_on_the_command_line_skips_polars_and_pyarrow(fmt):
    """A page is rendered from DuckDB's rows (timeline_rows): importing polars and pyarrow
    cost the 5M-kernel trace's first page 0.18 of its 3.3 CPU s."""
    from tracelens.demo import demo_path

    proc, mods = imported_top_modules(
        ["timeline", str(demo_path("bs1")), "--format", fmt, "-n", "20"]
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "duckdb" in mods and "rows 1-20 of" in proc.stdout + proc.stderr
    assert not mods & {"polars", "pyarrow"}, sorted(mods & {"polars", "pyarrow"})
