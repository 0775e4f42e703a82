"""stakeout: every launch of one kernel, checked against the rows put in built exports,
against census and plain SQLite on the real traces, and pinned output for a small case."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import REFERENCE, needs_shared, run_cli, shared_traces

import tracelens
from tracelens.errors import UsageError
from tracelens.filters import EventFilter
from tracelens.stakeout import histogram, launch_stats
from tracelens.stakeout_text import histogram_lines

KERNEL_TRACES = [
    p.stem for p in shared_traces() if (REFERENCE / f"{p.stem}_gpukernsum.csv").exists()
]
GEMM = "void gemm<float>(float *, int)"


def _small(tmp_path: Path) -> Path:
    """Two processes; NVTX push/pop, start/end, registered and non-UTF-8 ranges on the main
    thread, a range on a worker thread; a correlation id used in both processes; a launch
    whose API call was not traced. The first event is at 500 ns."""
    synth = pytest.importorskip("tracelens.synth")
    b = synth.TraceBuilder("3.25.0")
    b.process(4242, "python train.py")
    b.process(5151, "python other.py")
    b.nvtx_range("epoch", start=1_000, end=200_000, pid=4242)
    b.nvtx_range("step 1", start=2_000, end=60_000, pid=4242)
    b.nvtx_range(b"bad \xff text", start=10_000, end=20_000, pid=4242)
    b.nvtx_range("io", start=50_000, end=150_000, pid=4242, event_type=60)
    b.nvtx_range("registered step", start=70_000, end=90_000, pid=4242, registered=True)
    b.nvtx_range("worker loop", start=500, end=300_000, pid=4242, tid=4243)
    gemm1 = {"grid": (64, 1, 1), "block": (256, 1, 1), "registers": 64, "static_shared": 1024}
    c1 = b.runtime("cudaLaunchKernel_v7000", start=12_000, end=14_000, pid=4242)
    b.kernel(GEMM, start=15_000, end=25_000, correlation_id=c1, pid=4242, **gemm1)
    c2 = b.runtime("cudaLaunchKernel_v7000", start=30_000, end=31_000, pid=4242)
    b.kernel(GEMM, start=30_500, end=42_500, correlation_id=c2, pid=4242, **gemm1)
    c3 = b.runtime("cuLaunchKernel", start=75_000, end=76_000, pid=4242, event_class=1)
    b.kernel(
        GEMM,
        start=80_000,
        end=88_000,
        correlation_id=c3,
        pid=4242,
        grid=(128, 2, 1),
        block=(128, 1, 1),
        registers=96,
        dynamic_shared=4096,
        stream=9,
    )
    # The same correlation id in another process: not the call that launched c3's kernel.
    b.runtime("cudaLaunchKernel_v7000", start=77_000, end=77_500, pid=5151, correlation_id=c3)
    b.kernel("void gemm_small(float *)", start=100_000, end=101_000, correlation_id=c3, pid=5151)
    # From the worker thread: "epoch" on the main thread encloses it in time, but only
    # "worker loop" is on its thread.
    c5 = b.runtime("cudaLaunchKernel_v7000", start=160_000, end=161_000, pid=4242, tid=4243)
    b.kernel(GEMM, start=162_000, end=171_000, correlation_id=c5, pid=4242, device=1)
    b.kernel("void relu(float *)", start=180_000, end=181_500, pid=4242)  # API not traced
    return b.write(tmp_path / "small.sqlite")


# -- the small case, pinned ---------------------------------------------------------------
def test_table_is_exact(tmp_path, capsys):
    rc, out, err = run_cli(["stakeout", _small(tmp_path), "gemm"], capsys)
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "stakeout of small.sqlite: 'gemm' (contains), 5 launches of 2 kernels",
        "",
        "  Launches   Total (ns)   Avg (ns)   Med (ns)   Min (ns)   Max (ns)   StdDev (ns)",
        " " + "─" * 81,
        "         5       40,000    8,000.0    9,000.0      1,000     12,000       4,183.3",
        "",
        "kernels",
        "",
        "  Launches   Total (ns)   Avg (ns)   Name",
        " " + "─" * 67,
        "         4       39,000    9,750.0   void gemm<float>(float *, int)",
        "         1        1,000    1,000.0   void gemm_small(float *)",
        "",
        "launch configurations",
        "",
        "  Config   Launches   Total (ns)   Avg (ns)   GridXYZ          BlockXYZ         Registers   Static smem (bytes)   Dynamic smem (bytes)",
        " " + "─" * 134,
        "       1          2       22,000   11,000.0     64    1    1    256    1    1          64                 1,024                      0",
        "       2          2       10,000    5,000.0      1    1    1    128    1    1          32                     0                      0",
        "       3          1        8,000    8,000.0    128    2    1    128    1    1          96                     0                  4,096",
        "",
        "durations (ns)",
        "   1,000 –  2,100  ████████████████████████████████████████  1",
        "   2,101 –  3,201                                            0",
        "   3,202 –  4,302                                            0",
        "   4,303 –  5,403                                            0",
        "   5,404 –  6,504                                            0",
        "   6,505 –  7,605                                            0",
        "   7,606 –  8,706  ████████████████████████████████████████  1",
        "   8,707 –  9,807  ████████████████████████████████████████  1",
        "   9,808 – 10,908  ████████████████████████████████████████  1",
        "  10,909 – 12,000  ████████████████████████████████████████  1",
        "",
        "launches, by start",
        "",
        "  Start (ns)   Duration (ns)   Queue (ns)     Name                             Config   Device   Stream    PID    TID   Correlation id   API                NVTX",
        " " + "─" * 171,
        "      15,000          10,000    1,000         void gemm<float>(float *, int)        1        0        7   4242   4242                1   cudaLaunchKernel   bad \\xff text",
        "      30,500          12,000     -500 early   void gemm<float>(float *, int)        1        0        7   4242   4242                2   cudaLaunchKernel   step 1",
        "      80,000           8,000    4,000         void gemm<float>(float *, int)        3        0        9   4242   4242                3   cuLaunchKernel     registered step",
        "     100,000           1,000   22,500         void gemm_small(float *)              2        0        7   5151   5151                3   cudaLaunchKernel   —",
        "     162,000           9,000    1,000         void gemm<float>(float *, int)        2        1        7   4242   4243                4   cudaLaunchKernel   worker loop",
        "",
        "1 launch early: the kernel started before its launch call returned (the call returns after queueing the work, or the host and GPU clocks differ), so the queue time is no latency",
    ]


def test_csv_is_exact_and_converts_units(tmp_path, capsys):
    path = _small(tmp_path)
    rc, out, err = run_cli(["stakeout", path, "gemm", "-f", "csv"], capsys)
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "start_ns,duration_ns,queue_ns,name,grid_x,grid_y,grid_z,block_x,block_y,block_z,"
        "registers,static_smem_bytes,"
        "dynamic_smem_bytes,device,stream,pid,tid,correlation_id,api,nvtx",
        f'15000,10000,1000,"{GEMM}",64,1,1,256,1,1,64,1024,0,0,7,4242,4242,1,cudaLaunchKernel,bad \\xff text',
        f'30500,12000,-500,"{GEMM}",64,1,1,256,1,1,64,1024,0,0,7,4242,4242,2,cudaLaunchKernel,step 1',
        f'80000,8000,4000,"{GEMM}",128,2,1,128,1,1,96,0,4096,0,9,4242,4242,3,cuLaunchKernel,registered step',
        "100000,1000,22500,void gemm_small(float *),1,1,1,128,1,1,32,0,0,0,7,5151,5151,3,cudaLaunchKernel,",
        f'162000,9000,1000,"{GEMM}",1,1,1,128,1,1,32,0,0,1,7,4242,4243,4,cudaLaunchKernel,worker loop',
    ]
    rc, out, _ = run_cli(
        ["stakeout", path, "gemm", "-f", "csv", "--timeunit", "us", "--limit", "1"], capsys
    )
    assert out.splitlines()[0].startswith("start_us,duration_us,queue_us,name,")
    assert out.splitlines()[1].startswith(f'15.0,10.0,1.0,"{GEMM}",')
    assert len(out.splitlines()) == 2


def test_json_has_every_part(tmp_path, capsys):
    rc, out, _ = run_cli(
        ["stakeout", _small(tmp_path), "gemm", "-f", "json", "--sort", "duration", "--limit", "2"],
        capsys,
    )
    assert rc == 0
    doc = json.loads(out)
    assert (doc["pattern"], doc["match"], doc["name"]) == ("gemm", "contains", "demangled")
    assert doc["summary"] == {
        "launches": 5,
        "total_ns": 40000,
        "avg_ns": 8000.0,
        "med_ns": 9000.0,
        "min_ns": 1000,
        "max_ns": 12000,
        "stddev_ns": 4183.3,
    }
    assert [k["name"] for k in doc["kernels"]] == [GEMM, "void gemm_small(float *)"]
    assert [c["launches"] for c in doc["configs"]] == [2, 2, 1]
    assert sum(h["launches"] for h in doc["histogram"]) == 5
    assert [(r["duration_ns"], r["nvtx"]) for r in doc["launches"]] == [
        (12000, "step 1"),
        (10000, "bad \\xff text"),
    ]


def test_markdown_sections(tmp_path, capsys):
    rc, out, _ = run_cli(["stakeout", _small(tmp_path), "relu", "-f", "markdown"], capsys)
    assert rc == 0
    assert "**stakeout of small.sqlite: 'relu' (contains), 1 launch of void relu(float *)**" in out
    assert "**launch configurations**" in out and "**durations**" in out
    assert "| 180,000 | 1,500 | — | `void relu(float *)` |" in out


def test_untraced_api_leaves_the_columns_empty(tmp_path):
    with tracelens.open(_small(tmp_path)) as trace:
        r = trace.stakeout("relu")
    row = r.launches.row(0, named=True)
    assert (row["api"], row["tid"], row["queue_ns"], row["nvtx"]) == (None, None, None, None)
    assert row["start_ns"] == 180_000 and row["duration_ns"] == 1_500


@pytest.mark.parametrize(
    "pattern, match, expected",
    [
        ("gemm", "exact", [GEMM] * 4),  # the short name is "gemm"
        (GEMM, "exact", [GEMM] * 4),
        ("gemm_", "contains", ["void gemm_small(float *)"]),
        ("^gemm_", "regex", ["void gemm_small(float *)"]),
        (r"gemm<\w+>", "regex", [GEMM] * 4),
        ("(relu|small)", "regex", ["void gemm_small(float *)", "void relu(float *)"]),
    ],
)
def test_matching(pattern, match, expected, tmp_path):
    with tracelens.open(_small(tmp_path)) as trace:
        r = trace.stakeout(pattern, match=match)
    assert r.launches["name"].to_list() == expected


def test_options_sort_limit_name_and_filters(tmp_path):
    with tracelens.open(_small(tmp_path)) as trace:
        longest = trace.stakeout("gemm", sort="duration", limit=2, name="short")
        worker = trace.stakeout("gemm", where=EventFilter(device=1))
        other = trace.stakeout("gemm", where=EventFilter(pid=5151))
        stream9 = trace.stakeout("gemm", where=EventFilter(stream=9))
        window = trace.stakeout("gemm", where=EventFilter(start_ns=26_000, end_ns=31_000))
        nothing = trace.stakeout("gemm", where=EventFilter(device=7))
    assert longest.launches["duration_ns"].to_list() == [12_000, 10_000]
    assert longest.launches["name"].to_list() == ["gemm", "gemm"]
    assert longest.stats.launches == 5 and longest.histogram["launches"].sum() == 5
    assert worker.launches["nvtx"].to_list() == ["worker loop"]
    assert other.launches["api"].to_list() == ["cudaLaunchKernel"]
    assert other.launches["queue_ns"].to_list() == [22_500]
    assert stream9.launches["correlation_id"].to_list() == [3]
    # the window [26000, 31000] ns from session start keeps the launch that spans it only
    assert window.launches["duration_ns"].to_list() == [12_000]
    assert nothing.stats is None and nothing.launches.height == 0 and nothing.kernels.height == 0


def test_nothing_passes_the_filters(tmp_path, capsys):
    rc, out, err = run_cli(["stakeout", _small(tmp_path), "gemm", "--device", "7"], capsys)
    assert (rc, err) == (0, "tracelens: no GPU work on device 7; devices present: 0, 1\n")
    assert out == (
        "stakeout of small.sqlite: 'gemm' (contains), 0 launches\n"
        "no launch of a matching kernel passes the filters\n"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["gemm<double>", "--match", "exact"],
            "tracelens: no kernel in small.sqlite is named 'gemm<double>'; closest: 'gemm'\n",
        ),
        (
            ["^conv", "--match", "regex"],
            "tracelens: no kernel in small.sqlite has a name matching '^conv'; it has 6 kernel "
            "names (demangled and short), see `tracelens census --name short`\n",
        ),
        (
            ["gemm(", "--match", "regex"],
            "tracelens: --match regex: 'gemm(' is not a valid regular expression: missing ): gemm(\n",
        ),
        (
            ["gemm", "--match", "fuzzy"],
            "tracelens: unknown --match 'fuzzy'; use one of: exact, contains, regex\n",
        ),
        (
            ["gemm", "--sort", "name"],
            "tracelens: unknown --sort 'name'; use one of: start, duration\n",
        ),
        (
            ["gemm", "--limit", "-1"],
            "tracelens: --limit must be 0 (every launch) or more (got -1)\n",
        ),
        (
            ["gemm", "--name", "pretty"],
            "tracelens: unknown --name 'pretty'; use one of: demangled, short, mangled\n",
        ),
        ([], "tracelens: missing KERNEL: give a kernel name or part of one\n"),
        ([""], "tracelens: KERNEL is empty; give a kernel name or part of one\n"),
    ],
)
def test_bad_input_is_one_line(args, message, tmp_path, capsys):
    rc, out, err = run_cli(["stakeout", _small(tmp_path), *args], capsys)
    assert (rc, out, err) == (2, "", message)


def test_a_name_that_matches_only_ignoring_case_is_an_empty_result_with_a_hint(tmp_path, capsys):
    # a valid pattern with no match in this case: exit 0, the offer of -i on stderr
    for fmt in ("table", "csv", "json", "markdown"):
        rc, out, err = run_cli(["stakeout", _small(tmp_path), "Gemm", "-f", fmt], capsys)
        assert rc == 0 and out, fmt
        assert err == (
            "tracelens: no kernel in small.sqlite has a name containing 'Gemm'; 4 names match "
            "ignoring case ('gemm', ...): add --ignore-case\n"
        )
    rc, out, _ = run_cli(["stakeout", _small(tmp_path), "Gemm"], capsys)
    assert out == (
        "stakeout of small.sqlite: 'Gemm' (contains), 0 launches\n"
        "no kernel name matches in this case (some do ignoring case)\n"
    )
    rc, out, err = run_cli(["stakeout", _small(tmp_path), "Gemm", "-i"], capsys)
    assert rc == 0 and err == "" and "0 launches" not in out


def test_library_says_why_or_raises_usage_error(tmp_path):
    with tracelens.open(_small(tmp_path)) as trace:
        result = trace.stakeout("Gemm")
        assert result.total_launches == 0 and result.launches.is_empty()
        assert str(result.hint).endswith(
            "4 names match ignoring case ('gemm', ...): add ignore_case"
        )
        assert trace.stakeout("gemm").hint is None
        with pytest.raises(UsageError, match="closest: 'gemm'"):
            trace.stakeout("gemmm")


# -- helpers ------------------------------------------------------------------------------
def test_stats_and_histogram_helpers():
    assert launch_stats([]) is None
    s = launch_stats([4, 1, 3, 2])
    assert (s.launches, s.total_ns, s.avg_ns, s.med_ns, s.min_ns, s.max_ns) == (
        4,
        10,
        2.5,
        2.5,
        1,
        4,
    )
    assert s.stddev_ns == 1.3  # 1.2910 -> 1.3
    assert launch_stats([7]).stddev_ns == 0.0
    h = histogram([5, 5, 5])
    assert h.rows() == [(5, 5, 3)]
    h = histogram([0, 1, 2, 3])  # fewer ns than bins: one bin per ns
    assert h.rows() == [(0, 0, 1), (1, 1, 1), (2, 2, 1), (3, 3, 1)]
    h = histogram(list(range(100)) + [1_000])
    assert h["launches"].to_list() == [100, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    assert h["hi_ns"].to_list()[-1] == 1_000
    lines = histogram_lines(h, "us", width=10)
    assert lines[0] == "  0.000 – 0.100  ██████████  100"
    assert lines[1] == "  0.101 – 0.201              0"
    assert lines[-1] == "  0.909 – 1.000  █           1"  # at least one block for a non-empty bin


# -- built exports: every field against what was inserted ---------------------------------
def _enclosing(nvtx, start, end):
    inside = [n for n in nvtx if n.end is not None and n.start <= start and n.end >= end]
    if not inside:
        return None
    best = max(inside, key=lambda n: (n.start, -n.end))
    text = best.text
    return text.decode("utf-8", "backslashreplace") if isinstance(text, bytes) else text


@pytest.mark.parametrize("schema", ["2.9.1", "3.0.0", "3.25.0"])
def test_built_exports_every_launch_and_call(schema, tmp_path):
    builder = pytest.importorskip("fixtures.builder")
    fx = builder.build_mixed(tmp_path, schema)
    x = fx.expected
    calls = {(a.pid, a.correlation_id): a for a in x.runtime}
    origin = 0  # start_ns counts from session start, as --start/--end
    with tracelens.open(fx.path) as trace:
        for name in {k.name for k in x.kernels}:
            r = trace.stakeout(name, match="exact")
            mine = sorted((k for k in x.kernels if k.name == name), key=lambda k: k.start)
            got = r.launches.to_dicts()
            assert len(got) == len(mine) == r.stats.launches
            for k, row in zip(mine, got, strict=True):
                call = calls[(k.pid, k.correlation_id)]
                # NVTX ranges of the fixture are on the main thread of TRAIN_PID (tid = pid)
                nvtx = list(x.nvtx) if call.pid == builder.TRAIN_PID else []
                assert row == row | {
                    "start_ns": k.start - origin,
                    "duration_ns": k.duration,
                    "queue_ns": k.start - call.end,
                    "name": name,
                    **dict(zip(("grid_x", "grid_y", "grid_z"), k.grid, strict=True)),
                    **dict(zip(("block_x", "block_y", "block_z"), k.block, strict=True)),
                    "device": k.device,
                    "stream": k.stream,
                    "pid": k.pid,
                    "tid": call.tid,
                    "correlation_id": k.correlation_id,
                    "api": "cudaLaunchKernel",
                    "nvtx": _enclosing(nvtx, call.start, call.end),
                }
            assert r.stats.total_ns == sum(k.duration for k in mine)


def test_built_odd_strings(tmp_path):
    builder = pytest.importorskip("fixtures.builder")
    fx = builder.build_odd_strings(tmp_path, "3.25.0")
    with tracelens.open(fx.path) as trace:
        bad = trace.stakeout("bad_")
        uni = trace.stakeout("ядро", name="short")
    assert bad.kernels["name"].to_list() == [builder.display(builder.BAD_UTF8_NAME)]
    assert bad.stats.med_ns == 6_500.0  # 5000, 6000, 7000, 9000
    calls = {a.correlation_id: a for a in fx.expected.runtime}
    kernels = [k for k in fx.expected.kernels if k.name == builder.BAD_UTF8_NAME]
    expected = [
        _enclosing(fx.expected.nvtx, calls[k.correlation_id].start, calls[k.correlation_id].end)
        for k in kernels
    ]
    assert bad.launches["nvtx"].to_list() == expected
    # the first call precedes every range; the others are inside the non-UTF-8 text range
    assert expected == [None] + [builder.display(builder.BAD_UTF8_NVTX)] * 3
    assert uni.stats.launches == 4


def test_nvtx_join_is_planned_as_a_range_join(tmp_path):
    """The innermost-range query must stay an IEJoin (n log n): a piecewise merge or
    nested loop join takes minutes on 100k calls x 100k ranges."""
    with tracelens.open(_small(tmp_path)) as trace:
        trace.load_nvtx_text()
        con = trace.db
        con.execute(
            'INSERT INTO nvtx_text (start, "end", eventType, globalTid, text) SELECT i * 10, '
            "i * 10 + 8, 59, 4242::BIGINT * 16777216 + 4242, 'r' FROM range(5000) t(i)"
        )
        con.execute(
            "CREATE TEMP TABLE nvtx_probes AS SELECT i AS probe, "
            "4242::BIGINT * 16777216 + 4242 AS global_tid, "
            'i * 10 AS start, i * 10 + 5 AS "end" FROM range(5000) t(i)'
        )
        con.execute("SET merge_join_threshold = 0")
        from tracelens import _resources

        plan = con.execute("EXPLAIN " + _resources.query("_nvtx_innermost")).fetchall()[0][1]
    assert "IE_JOIN" in plan


# -- real traces --------------------------------------------------------------------------
@needs_shared
@pytest.mark.parametrize("stem", KERNEL_TRACES)
def test_top_kernel_equals_census_and_plain_sqlite(stem, trace_copies):
    path = trace_copies[stem]
    with tracelens.open(path) as trace:
        top = trace.census().row(0, named=True)
        r = trace.stakeout(top["name"], match="exact", limit=0)
        origin = 0  # session start
    s = r.stats
    assert (s.launches, s.total_ns, s.avg_ns, s.med_ns, s.min_ns, s.max_ns, s.stddev_ns) == (
        top["instances"],
        top["total_ns"],
        top["avg_ns"],
        top["med_ns"],
        top["min_ns"],
        top["max_ns"],
        top["stddev_ns"],
    )
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    con.text_factory = lambda b: b.decode("utf-8", "backslashreplace")
    rows = con.execute(
        "SELECT k.start, k.end - k.start, k.correlationId, s.value, r.globalTid & 16777215, "
        "k.start - r.end FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds d ON d.id = k.demangledName "
        "LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId "
        "AND (r.globalTid >> 24) = (k.globalPid >> 24) "
        "LEFT JOIN StringIds s ON s.id = r.nameId WHERE d.value = ? ORDER BY k.start",
        (top["name"],),
    ).fetchall()
    con.close()
    expected = [
        (start - origin, dur, cid, api[:-6] if api[-6:-4] == "_v" else api, tid, queue)
        for start, dur, cid, api, tid, queue in rows
    ]
    got = r.launches.select(
        "start_ns", "duration_ns", "correlation_id", "api", "tid", "queue_ns"
    ).rows()
    assert got == expected


@needs_shared
def test_no_kernels_is_exit_3(trace_copies, capsys):
    path = trace_copies["nsys2021.3_cpu_only_no_cuda"]
    rc, out, err = run_cli(["stakeout", path, "k"], capsys)
    assert (rc, out) == (3, "")
    assert err == f"tracelens: {path}: no CUDA kernel data: was it captured with -t cuda?\n"


def test_demo_trace_has_nvtx_layers(capsys):
    pytest.importorskip("tracelens.demo")
    rc, out, err = run_cli(
        [
            "stakeout",
            "--demo",
            "bs1",
            "reshape_and_cache_flash_kernel",
            "-f",
            "json",
            "--limit",
            "0",
        ],
        capsys,
    )
    assert (rc, err) == (0, "")
    doc = json.loads(out)
    assert doc["summary"]["launches"] == 140
    labels = {row["nvtx"] for row in doc["launches"]}
    assert all(label and label.startswith("model.layers.") for label in labels), labels


def test_a_sqlite_export_gives_stakeout_only_the_named_kernels(monkeypatch):
    # Read directly, SQLite itself keeps the launches of the matched names (the scanner
    # would convert every column of every kernel); the view is whole again afterwards, and
    # the stakeout equals one over the whole view.
    import contextlib

    from tracelens.demo import demo_path
    from tracelens.trace import Trace

    count = 'SELECT count(*) FROM kernels WHERE "demangledName" IN (SELECT unnest($ids))'
    with tracelens.open(demo_path("bs1")) as t:
        total = t.db.execute("SELECT count(*) FROM kernels").fetchone()[0]
        rows = t.query_rows("stakeout_name_ids", pattern="nvjet_tst", regex=None, match="contains")
        ids = [r[0] for r in rows.iter_rows()]
        named = t.db.execute(count, {"ids": ids}).fetchone()[0]
        with t._kernels_named(ids):
            inside = t.db.execute("SELECT count(*) FROM kernels").fetchone()[0]
        after = t.db.execute("SELECT count(*) FROM kernels").fetchone()[0]
        narrowed = t.stakeout("nvjet_tst")
    assert 0 < named == inside < total == after
    monkeypatch.setattr(Trace, "_kernels_named", lambda self, ids: contextlib.nullcontext())
    with tracelens.open(demo_path("bs1")) as t:
        whole = t.stakeout("nvjet_tst")
    assert narrowed.launches.equals(whole.launches) and narrowed.stats == whole.stats


SORTS_BOTH = ("start", "duration")


def test_launching_calls_from_sqlite_equal_the_views(monkeypatch, tmp_path):
    # Read directly, SQLite keeps the calls of the listed launches' correlation ids; the
    # launches (every column, the queue time, the NVTX range) equal those from the view.
    from tracelens import stakeout_calls

    path = _small(tmp_path)
    reads = []
    export_rows = stakeout_calls._export_call_rows
    monkeypatch.setattr(
        stakeout_calls,
        "_export_call_rows",
        lambda *a: reads.append(rows := export_rows(*a)) or rows,
    )
    with tracelens.open(path) as t:
        direct = [
            t.stakeout("gemm|relu", match="regex", limit=n, sort=s)
            for n in (0, 2)
            for s in SORTS_BOTH
        ]
    assert all(r is not None for r in reads)
    # every launch: c1, c2, c3 (in both processes: 5 calls of 4 ids), c5; 2 listed: c1, c2
    assert [r.height for r in reads] == [5, 5, 2, 2]
    monkeypatch.setattr(stakeout_calls, "SQLITE_IDS_MAX", 0)  # every read through the view
    with tracelens.open(path) as t:
        viewed = [
            t.stakeout("gemm|relu", match="regex", limit=n, sort=s)
            for n in (0, 2)
            for s in SORTS_BOTH
        ]
    for a, b in zip(direct, viewed, strict=True):
        assert a.launches.equals(b.launches)
    assert direct[0].launches["api"].to_list() == [
        "cudaLaunchKernel", "cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernel",
        "cudaLaunchKernel", None,
    ]  # fmt: skip


def test_a_damaged_launching_call_is_read_through_the_view(tmp_path):
    # A call row SQLite would hand over with a text start is not used: the view reads the
    # table and says what is wrong, as it did before SQLite selected the calls.
    path = _small(tmp_path)
    con = sqlite3.connect(path)
    con.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = 'x' WHERE start = 12000")
    con.commit()
    con.close()
    from tracelens import stakeout_calls

    with tracelens.open(path) as t:
        ids = t.query("stakeout_launches", pattern="gemm", regex=None, match="contains",
                      name_kind="short", origin_ns=0, device=None, pid=None, stream=None,
                      start_ns=None, end_ns=None, selection=None)["correlation_id"]  # fmt: skip
        assert stakeout_calls._export_call_rows(t, ids.to_list()) is None
        assert stakeout_calls._export_call_rows(t, ids.to_list()[1:]) is not None


def test_csv_and_json_say_on_stderr_when_launches_were_cut(tmp_path, capsys):
    """--limit cuts the launches in every format; csv and json, which have no caption, say so
    on stderr in the launches caption's words, and stdout stays only the data."""
    path = _small(tmp_path)
    _, table, _ = run_cli(["stakeout", path, "gemm", "--limit", "2"], capsys)
    assert "(first 2 of 5; --limit 0 for all)" in table  # the wording the note reuses
    for fmt in ("csv", "json"):
        rc, out, err = run_cli(["stakeout", path, "gemm", "-f", fmt, "--limit", "2"], capsys)
        assert (rc, err) == (0, "tracelens: note: first 2 of 5; --limit 0 for all\n"), fmt
        launches = out.count("\n") - 1 if fmt == "csv" else len(json.loads(out)["launches"])
        assert launches == 2, fmt
        rc, _, err = run_cli(["stakeout", path, "gemm", "-f", fmt, "--limit", "0"], capsys)
        assert (rc, err) == (0, ""), fmt


def test_what_every_listed_launch_shares_is_said_of_those_listed(capsys):
    # With --limit cutting the list, the values every listed launch shares are said of the
    # listed ones, not of every launch (the others may run elsewhere).
    rc, out, _ = run_cli(["stakeout", "--demo", "bs16", "merge_attn", "--limit", "3"], capsys)
    assert rc == 0
    assert "launches, by start (first 3 of 112; --limit 0 for all); in each of these 3: " in out
    rc, out, _ = run_cli(["stakeout", "--demo", "bs16", "merge_attn", "--limit", "0"], capsys)
    assert rc == 0
    assert "launches, by start; in every one: " in out
