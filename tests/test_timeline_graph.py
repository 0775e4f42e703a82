"""timeline and CUDA graph replays traced at graph level (nsys's default
--cuda-graph-trace=graph: a replay is one row of CUPTI_ACTIVITY_KIND_GRAPH_TRACE and its
kernels are in no table): one row per replay (kind 'graph', named 'CUDA graph <id>' as the
steps name it), and no idle gap while a replay runs (util counts replays busy). Before, each
replay was shown as an idle gap, and --step left the step's replay out without a word.

The fixture: per step (3 steps, 2 ms apart, device 0 stream 7), kernel 'pre' 100 us, a
graph replay (graph 5) 800 us starting 50 us after it, kernel 'post' 100 us starting 50 us
after the replay. The only gaps over 100 us are between the steps (post's end to the next
pre: 900 us). Expected values from what was put in."""

from __future__ import annotations

import pytest
from conftest import run_cli
from fixtures.builder import add_graph_replays

import tracelens
from tracelens.synth import TraceBuilder, global_pid

PID = 4242
STEPS = 3
STEP_NS = 2_000_000
T0 = 1_000_000
PRE_NS, LAG_NS, REPLAY_NS, POST_NS = 100_000, 50_000, 800_000, 100_000
GRAPH_ID = 5


def _times(step: int) -> dict[str, tuple[int, int]]:
    """GPU (start, end) of step ``step``'s pre kernel, replay and post kernel."""
    pre = T0 + (step - 1) * STEP_NS
    replay = pre + PRE_NS + LAG_NS
    post = replay + REPLAY_NS + LAG_NS
    return {
        "pre": (pre, pre + PRE_NS),
        "graph": (replay, replay + REPLAY_NS),
        "post": (post, post + POST_NS),
    }


@pytest.fixture(scope="module")
def replays(tmp_path_factory):
    b = TraceBuilder("3.25.0")
    b.process(PID, "python serve.py")
    b.gpu(0)
    rows = []
    for step in range(1, STEPS + 1):
        times = _times(step)
        host = times["pre"][0] - 30_000
        for i, name in enumerate(("pre", "graph", "post")):
            at = host + i * 5_000
            if name == "graph":
                cid = b.runtime("cudaGraphLaunch_v10000", start=at, end=at + 2_000, pid=PID)
                start, end = times[name]
                rows.append((start, end, 0, 1, None, 7, cid, global_pid(PID), GRAPH_ID, 1))
                continue
            cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 2_000, pid=PID)
            start, end = times[name]
            b.kernel(f"void {name}_k(float*)", start=start, end=end, pid=PID, correlation_id=cid)
    path = b.write(tmp_path_factory.mktemp("graphtl") / "replays.sqlite")
    add_graph_replays(path, rows)
    return path


def _between_steps() -> set[tuple[int, int]]:
    return {(_times(s)["post"][1], _times(s + 1)["pre"][0]) for s in range(1, STEPS)}


def test_a_replay_is_a_row_and_no_gap(replays):
    with tracelens.open(replays) as trace:
        events = trace.timeline(limit=0).events
    graph = events.filter(kind="graph")
    assert graph.select("start_ns", "duration_ns", "device", "stream", "pid", "name").rows() == [
        (_times(s)["graph"][0], REPLAY_NS, 0, 7, PID, f"CUDA graph {GRAPH_ID}")
        for s in range(1, STEPS + 1)
    ]
    gaps = events.filter(kind="gap")
    assert {(s, s + d) for s, d in gaps.select("start_ns", "duration_ns").rows()} == (
        _between_steps()
    )


@pytest.mark.parametrize("limit", [1, 2, 4])
def test_pages_are_the_rows_read_whole(replays, limit):
    with tracelens.open(replays) as trace:
        whole = trace.timeline(limit=0).events
        pages, offset = [], 0
        while offset < whole.height:
            page = trace.timeline(limit=limit, offset=offset)
            assert page.total == whole.height
            pages.extend(page.events.rows())
            offset += limit
    assert pages == whole.rows()


def test_step_keeps_its_replay(replays, capsys):
    rc, out, err = run_cli(["timeline", replays, "--step", "2", "-f", "csv", "-n", "0"], capsys)
    assert rc == 0, err
    rows = [line.split(",") for line in out.splitlines()[1:]]
    assert [(r[2], r[-1]) for r in rows] == [
        ("kernel", "void pre_k(float*)"),
        ("graph", f"CUDA graph {GRAPH_ID}"),
        ("kernel", "void post_k(float*)"),
    ]
    assert int(rows[1][0]) == _times(2)["graph"][0]


def test_window_inside_a_replay_is_its_row_not_idle(replays, capsys):
    start, end = _times(1)["graph"]
    window = ["--start", str(start + 100_000), "--end", str(end - 100_000)]
    rc, out, err = run_cli(["timeline", replays, *window, "-f", "csv", "-n", "0"], capsys)
    assert rc == 0, err
    (row,) = [line.split(",") for line in out.splitlines()[1:]]
    assert (row[0], row[2]) == (str(start), "graph")
