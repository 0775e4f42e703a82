"""CUDA graph replays traced at graph level are never silently left out.

nsys traces CUDA graphs at graph level by default (``--cuda-graph-trace=graph``; vLLM decodes
with CUDA graphs): each replay is one row of CUPTI_ACTIVITY_KIND_GRAPH_TRACE and its kernels
are in no other table. tracelens counts them in ``info`` and says, on every command whose
numbers leave them out, how many there are and how much GPU time they took.

No vendored DDL (real ``CREATE`` statements from real exports) has that table, so synth
cannot write it: these tests write the export with TraceBuilder, then create the table with
the columns of CUPTI's graph-trace record that nsys exports (fixtures.builder.GRAPH_TRACE_DDL).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import run_cli
from fixtures.builder import GRAPH_TRACE_DDL, add_graph_replays

import tracelens
from tracelens.filters import EventFilter
from tracelens.synth import TraceBuilder, global_pid

PID = 4242
REPLAYS = 200
REPLAY_NS = 5_000_000  # 200 x 5 ms = 1.000 s of GPU time
FIRST_REPLAY, EVERY = 1_000_000, 10_000_000
LAST_END = FIRST_REPLAY + (REPLAYS - 1) * EVERY + REPLAY_NS
KERNEL = "void add<float>(float *, int)"

NOTE = (
    "200 CUDA graph replays (1.00 s of GPU time) are not broken down by kernel and are not "
    "in these numbers; profile with --cuda-graph-trace=node to see their kernels"
)
INFO_LINE = (
    "graph      200 replays, 1.00 s of GPU time, not broken down by kernel "
    "(re-profile with --cuda-graph-trace=node)"
)


def _replays(n: int = REPLAYS) -> list[tuple]:
    rows = []
    for i in range(n):
        start = FIRST_REPLAY + i * EVERY
        # start, end, deviceId, contextId, greenContextId, streamId, correlationId,
        # globalPid, graphId, graphExecId
        rows.append((start, start + REPLAY_NS, 0, 1, None, 7, 10_000 + i, global_pid(PID), 3, 4))
    return rows


def _build(path: Path, *, kernels: bool = True, graph_ddl: str | None = GRAPH_TRACE_DDL) -> Path:
    b = TraceBuilder("3.0.0")
    b.process(PID, "python -m vllm.entrypoints.openai.api_server")
    b.gpu(0, "NVIDIA H100 80GB HBM3", sm_count=132)
    for i in range(3):
        cid = b.runtime("cudaLaunchKernel_v7000", start=100 + i * 50_000, end=2_000 + i * 50_000)
        if kernels:
            start = 5_000 + i * 50_000
            b.kernel(KERNEL, start=start, end=start + 10_000, correlation_id=cid)
    b.write(path)
    if graph_ddl is not None:
        add_graph_replays(path, _replays(), graph_ddl)
    return path


@pytest.fixture(scope="module")
def graphs(tmp_path_factory) -> Path:
    """3 kernels (30 µs) and 200 graph-level replays (1.000 s) on device 0, stream 7."""
    return _build(tmp_path_factory.mktemp("graph") / "graphs.sqlite")


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Path:
    """The same kernels, no graph table: nothing to say."""
    return _build(tmp_path_factory.mktemp("plain") / "plain.sqlite", graph_ddl=None)


# -- the view ----------------------------------------------------------------------------
def test_graph_replays_view_reads_columns_by_name(graphs):
    with tracelens.open(graphs) as t:
        df = t.sql("SELECT * FROM graph_replays ORDER BY start")
    assert df.columns == [
        "start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
        "graphId", "graphExecId",
    ]  # fmt: skip
    assert df.height == REPLAYS
    assert df.row(0) == (
        FIRST_REPLAY,
        FIRST_REPLAY + REPLAY_NS,
        0,
        1,
        7,
        10_000,
        global_pid(PID),
        3,
        4,
    )


def test_graph_replays_view_absent_column_is_null_absent_table_is_empty(tmp_path, plain):
    older = GRAPH_TRACE_DDL.replace("    graphExecId                 INTEGER   NOT NULL\n", "")
    older = older.replace("graphId                     INTEGER   NOT NULL,", "graphId INTEGER")
    path = _build(tmp_path / "older.sqlite", graph_ddl=older)
    with tracelens.open(path) as t:
        got = t.sql("SELECT count(*) AS n, count(graphExecId) AS ids FROM graph_replays").row(0)
    assert got == (REPLAYS, 0)
    with tracelens.open(plain) as t:
        df = t.sql("SELECT * FROM graph_replays")
    assert df.height == 0 and "graphExecId" in df.columns


# -- info ----------------------------------------------------------------------------------
def test_info_counts_graph_replays_and_their_time(graphs):
    with tracelens.open(graphs) as t:
        info = t.info
    graph = next(e for e in info.events if e.kind == "graph")
    assert graph.table == "CUPTI_ACTIVITY_KIND_GRAPH_TRACE" and graph.present
    assert (graph.count, graph.first_ns, graph.last_ns) == (REPLAYS, FIRST_REPLAY, LAST_END)
    assert info.count("graph") == REPLAYS and info.count("kernel") == 3
    assert info.graph_replay_ns == REPLAYS * REPLAY_NS == 1_000_000_000
    assert info.end_ns == LAST_END  # the span reaches the last replay, not the last kernel


def test_info_text_has_a_graph_line(graphs, capsys):
    rc, out, err = run_cli(["info", graphs], capsys)
    assert rc == 0 and err == ""
    assert out.splitlines()[-1] == INFO_LINE
    assert "span       100 ns → 2.00 s (duration 2.00 s, from session start)" in out


def test_info_json_has_count_and_time_and_keeps_its_keys(graphs, capsys):
    rc, out, _ = run_cli(["info", graphs, "--format", "json"], capsys)
    d = json.loads(out)
    assert rc == 0
    assert list(d) == [
        "path", "size_bytes", "nsys_version", "schema_version", "metadata_table",
        "session_start_utc_ns", "start_ns", "end_ns", "gpus", "processes", "events",
        "graph_replay_ns", "tables", "metadata", "duration_ns",
    ]  # fmt: skip
    assert d["graph_replay_ns"] == 1_000_000_000
    assert d["events"][-1] == {
        "kind": "graph",
        "table": "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
        "present": True,
        "count": REPLAYS,
        "first_ns": FIRST_REPLAY,
        "last_ns": LAST_END,
    }
    assert [e["kind"] for e in d["events"]] == [
        "kernel", "memcpy", "memset", "runtime", "nvtx", "osrt", "graph"
    ]  # fmt: skip


def test_info_without_graph_table(plain, capsys):
    rc, out, _ = run_cli(["info", plain], capsys)
    assert rc == 0 and "graph" not in out
    rc, out, _ = run_cli(["info", plain, "-f", "json"], capsys)
    d = json.loads(out)
    assert d["graph_replay_ns"] == 0
    assert d["events"][-1] == {
        "kind": "graph",
        "table": "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
        "present": False,
        "count": 0,
        "first_ns": None,
        "last_ns": None,
    }


# -- the note --------------------------------------------------------------------------------
def test_graph_note_wording_and_filters(graphs, plain):
    with tracelens.open(graphs) as t:
        assert t.graph_note() == NOTE
        assert t.graph_replays() == (REPLAYS, 1_000_000_000)
        # the filters of the command apply: device, stream, pid, time window (nsys rule)
        assert t.graph_note(EventFilter(device=1)) is None
        assert t.graph_note(EventFilter(stream=8)) is None
        assert t.graph_note(EventFilter(pid=PID + 1)) is None
        assert t.graph_note(EventFilter(pid=PID, stream=7)) == NOTE
        one = EventFilter(start_ns=FIRST_REPLAY + 1, end_ns=FIRST_REPLAY + 2)
        assert t.graph_note(one) == (
            "1 CUDA graph replay (5.00 ms of GPU time) is not broken down by kernel and is "
            "not in these numbers; profile with --cuda-graph-trace=node to see its kernels"
        )
    with tracelens.open(plain) as t:
        assert t.graph_note() is None and t.graph_replays() == (0, 0)


def test_census_table_ends_with_the_note(graphs, capsys):
    rc, out, err = run_cli(["census", graphs], capsys)
    assert rc == 0 and err == ""
    assert out.endswith("\n1 kernel row\nnote: " + NOTE + "\n")


def test_census_markdown_note_is_a_paragraph_after_the_table(graphs, capsys):
    rc, out, err = run_cli(["census", graphs, "-f", "markdown"], capsys)
    assert rc == 0 and err == ""
    assert out.endswith(f"| `{KERNEL}` |\n\nnote: {NOTE}\n")


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_census_machine_formats_put_the_note_on_stderr(graphs, capsys, fmt):
    rc, out, err = run_cli(["census", graphs, "-f", fmt], capsys)
    assert rc == 0
    assert err == f"tracelens: note: {NOTE}\n"
    assert "note" not in out
    if fmt == "csv":
        assert out.splitlines()[1] == f'100.0,30000,3,10000.0,10000.0,10000,10000,0.0,"{KERNEL}"'
    else:
        assert json.loads(out)[0]["instances"] == 3


def test_census_note_follows_the_filters(graphs, capsys):
    hint = "tracelens: no GPU work on device 1; devices present: 0\n"  # and no graph note
    rc, out, err = run_cli(["census", graphs, "--device", "1"], capsys)
    assert rc == 0 and err == hint and "note" not in out
    rc, out, err = run_cli(["census", graphs, "--device", "1", "-f", "csv"], capsys)
    assert rc == 0 and err == hint


@pytest.mark.parametrize(
    "args",
    [
        ["lineup"],
        ["lineup", "--show-other"],
        ["danger"],
        ["stakeout", KERNEL, "--match", "exact"],
        ["decode", "--trace"],
    ],
    ids=["lineup", "lineup-other", "danger", "stakeout", "decode"],
)
def test_other_commands_carry_the_note(graphs, capsys, args):
    argv = [*args, graphs] if args[0] == "decode" else [args[0], graphs, *args[1:]]
    rc, out, err = run_cli(argv, capsys)
    assert rc == 0 and err == ""
    assert out.endswith("\nnote: " + NOTE + "\n")
    rc, out, err = run_cli([*argv, "-f", "csv"], capsys)
    assert rc == 0 and err == f"tracelens: note: {NOTE}\n" and "note" not in out


def test_kernels_missing_because_of_graphs_say_so(tmp_path, graphs, capsys):
    only = _build(tmp_path / "only_graphs.sqlite", kernels=False)
    with sqlite3.connect(only) as con:
        assert not con.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'"
        ).fetchall()
    rc, out, err = run_cli(["census", only], capsys)
    assert rc != 0 and out == ""
    assert err == (
        f"tracelens: {only}: no CUDA kernel data: its 200 CUDA graph replays were traced at "
        "graph level, which records no kernels; profile with --cuda-graph-trace=node\n"
    )
    rc, _, err = run_cli(["stakeout", graphs, "flash_fwd"], capsys)
    assert rc == 2
    assert err.endswith(
        "; but its 200 CUDA graph replays were traced at graph level, which records no "
        "kernels; profile with --cuda-graph-trace=node\n"
    )


# -- no graph table: nothing changes ---------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        ["census", "--demo", "bs1", "-f", "csv"],
        ["census", "--demo", "bs1"],
        ["lineup", "--demo", "bs1", "-f", "json"],
        ["danger", "--demo", "bs16", "-f", "markdown"],
        ["decode", "--demo", "bs1", "--top", "3"],
        ["stakeout", "--demo", "bs1", "act_and_mul_kernel", "-f", "csv", "--limit", "0"],
    ],
)
def test_no_graph_table_no_note(capsys, args):
    rc, out, err = run_cli(args, capsys)
    assert rc == 0 and err == ""
    assert "CUDA graph" not in out and "note:" not in out


def test_demo_census_csv_is_unchanged(capsys):
    rc, out, err = run_cli(["census", "--demo", "bs1", "-f", "csv", "--top", "2"], capsys)
    assert (rc, err) == (0, "")
    assert out == (
        "time_pct,total_ns,instances,avg_ns,med_ns,min_ns,max_ns,stddev_ns,name\n"
        "29.4,10281838,112,91802.1,92022.0,81218,97003,2771.7,nvjet_tst_64x8_64x16_2x4_h_bz_TNT\n"
        "19.4,6774739,56,120977.5,117120.5,78204,169241,39105.4,"
        "nvjet_sm90_tst_64x88_64x11_1x4_h_bz_bias_TNT\n"
    )


def test_diff_says_graph_replays_are_left_out(graphs, plain):
    with tracelens.open(plain) as a, tracelens.open(graphs) as b:
        d = tracelens.diff(a, b)
    (clue,) = [c for c in d.clues if c.id == "graph_replays_hidden"]
    assert clue.clue == "CUDA graph replays are not broken down by kernel"
    assert clue.evidence.startswith("A: 0 replays (0 ns), B: 200 replays (1.00 s)")
    assert "--cuda-graph-trace=node" in clue.verdict
    with tracelens.open(plain) as a, tracelens.open(plain) as b:
        assert tracelens.diff(a, b).clues == ()


def test_report_header_says_graph_replays_are_left_out(graphs, plain):
    from tracelens.report import build_report

    with tracelens.open(graphs) as t:
        page = build_report(t)
    assert "not in this report" in page
    assert "200 CUDA graph replays (1.00 s of GPU time) are not broken down by kernel" in page
    with tracelens.open(plain) as t:
        assert "not in this report" not in build_report(t)


# -- steps -----------------------------------------------------------------------------------
# A CUDA-graph decode loop as torch.compile (reduce-overhead) and vLLM run it: per step two
# kernels (sampling, a copy) and one replay of the graph that holds the model, ~1,000x longer
# than the kernels; graph 3 on even steps, graph 5 (another batch size) on odd ones.
LOOP_STEPS, LOOP_EVERY, LOOP_REPLAY_NS, LOOP_KERNEL_NS = 12, 10_000_000, 8_000_000, 5_000


def _decode_loop(path: Path) -> Path:
    b = TraceBuilder("3.0.0")
    b.process(PID, "python -m vllm.entrypoints.openai.api_server")
    b.gpu(0, "NVIDIA H100 80GB HBM3", sm_count=132)
    replays = []
    for i in range(LOOP_STEPS):
        t = 1_000_000 + i * LOOP_EVERY
        for j, name in enumerate((KERNEL, "void copy_kernel<float>(float *, int)")):
            start = t + j * 10_000
            b.kernel(name, start=start, end=start + LOOP_KERNEL_NS, stream=7)
        start = t + 30_000
        graph = 3 if i % 2 == 0 else 5
        replays.append(
            (
                start,
                start + LOOP_REPLAY_NS,
                0,
                1,
                None,
                7,
                b.correlation_id(),  # launched after the step's kernels, as CUPTI numbers it
                global_pid(PID),
                graph,
                graph,
            )
        )
    b.write(path)
    add_graph_replays(path, replays)
    return path


@pytest.fixture(scope="module")
def decode_loop(tmp_path_factory) -> Path:
    return _decode_loop(tmp_path_factory.mktemp("loop") / "decode_loop.sqlite")


def test_period_steps_count_graph_replays_as_launches(decode_loop):
    """The period is 2 kernels + 1 replay of graph 3, then of graph 5 (6 launches): each
    step lasts two replays (~18 ms), not the microseconds of its kernels, and its busy time
    holds the replays while Kernels / Kernel (ns) count the kernels the export lists."""
    with tracelens.open(decode_loop) as t:
        steps = t.steps()
    assert steps.method == "period"
    assert "a motif of 4 kernels and 2 CUDA graph replays" in steps.detail
    motif = steps.motif[0]
    assert sorted(n for n in motif if n.startswith("CUDA graph")) == [
        "CUDA graph 3 (replay traced at graph level)",
        "CUDA graph 5 (replay traced at graph level)",
    ]
    frame = steps.frame
    assert frame.height == LOOP_STEPS // 2
    assert set(frame["kernels"]) == {4}
    assert set(frame["kernel_ns"]) == {4 * LOOP_KERNEL_NS}
    # Each step: 2 replays + 4 kernels, none overlapping.
    assert set(frame["busy_ns"]) == {2 * LOOP_REPLAY_NS + 4 * LOOP_KERNEL_NS}
    assert all(d > 2 * LOOP_REPLAY_NS for d in frame["duration_ns"])


def test_steps_launches_lists_replays_with_their_graph(decode_loop):
    with tracelens.open(decode_loop) as t:
        seq = t.query(
            "steps_launches",
            device=None, pid=None, stream=None, start_ns=None, end_ns=None, selection=None,
        )  # fmt: skip
    assert seq.height == 3 * LOOP_STEPS
    assert seq["graph_id"].head(6).to_list() == [None, None, 3, None, None, 5]
    assert seq.filter(seq["graph_id"].is_not_null())["name_id"].null_count() == LOOP_STEPS


# -- memory: no copies, and why -----------------------------------------------------------------
def test_memory_without_copies_says_the_replays_hide_them(graphs, capsys):
    rc, out, err = run_cli(["memory", graphs], capsys)
    assert (rc, out) == (3, "")
    assert err == (
        f"tracelens: {graphs}: no CUDA memcpy or memset data: none ran outside its 200 CUDA "
        "graph replays, which were traced at graph level and list no copies or memsets; "
        "profile with --cuda-graph-trace=node\n"
    )


def test_memory_without_copies_of_a_cuda_capture_does_not_blame_the_capture(plain, capsys):
    rc, out, err = run_cli(["memory", plain], capsys)
    assert (rc, out) == (3, "")
    assert err == (
        f"tracelens: {plain}: no CUDA memcpy or memset data: CUDA was traced (the export has "
        "kernels) and no copy or memset ran\n"
    )


# -- diff: not comparable, and the graphs may be why -------------------------------------------
def test_a_not_comparable_board_still_says_which_side_hides_work_in_graphs(
    decode_loop, tmp_path, capsys
):
    """A run of other kernels against the CUDA-graph decode loop: no causal clue, but the
    board says that B's GPU time is in replays whose kernels the export does not list, the
    likely reason the two have so few kernels in common."""
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3", sm_count=132)
    for i in range(40):
        b.kernel("void gemm_kernel<float>(float *, int)", start=i * 20_000, end=i * 20_000 + 9_000)
    other = tmp_path / "other.sqlite"
    b.write(other)
    rc, out, err = run_cli(["diff", other, decode_loop, "-f", "json"], capsys)
    board = json.loads(out)
    assert (rc, err, board["comparable"]) == (0, "", False)
    assert [c["id"] for c in board["clues"]] == ["kernels_in_graphs", "graph_replays_hidden"]
    assert board["clues"][1]["evidence"].startswith("A: 0 replays (0 ns), B: 12 replays (96.00 ms)")
