"""NVTX ranges in the timeline, stakeout's NVTX column and the report's NVTX lane are the
ranges the nvtx command has (nvtx_ranges()): a range still open when the capture ended
lasts until the last NVTX event, a range in a named domain is 'domain:label', and
stakeout's column names only ranges nsys projects onto the GPU (not a start/end range that
ended on another thread, which census --nvtx says holds no GPU work). Expected values come
from what the fixture holds."""

from __future__ import annotations

import pytest
from conftest import run_cli

import tracelens
from tracelens import activity
from tracelens.errors import UsageError
from tracelens.synth import TraceBuilder

PID, MAIN, WORKER = 100, 100, 101
DOMAIN_ID = 5
LAST_NVTX = 700_000  # the late mark: where the open range ends
# (kernel, the name its launch's innermost range has; None: no range holds it)
INNERMOST = [
    ("k_outer", "outer"),
    ("k_dom", "mydom:dom_range"),
    ("k_reg", "reg_range"),
    ("k_cross", None),
    ("k_open", "open_range"),
    ("k_none", "open_range"),
]
# the NVTX rows of the timeline: start, end, thread, name
NVTX_ROWS = [
    (1_000, 100_000, MAIN, "outer"),
    (20_000, 40_000, MAIN, "mydom:dom_range"),
    (45_000, 60_000, MAIN, "reg_range"),
    (130_000, 200_000, MAIN, "se_cross"),
    (500_000, LAST_NVTX, MAIN, "open_range"),
]


def build_nvtx_views(path):
    """Main thread: outer (k_outer) holding dom_range in domain 'mydom' (k_dom) and
    reg_range, a registered string (k_reg); se_cross, a start/end range opened here and
    ended on the worker (k_cross launched inside it in time); open_range, pushed at 500 us
    and never popped (k_open at 510 us, k_none at 600 us); a mark at 700 us, the last NVTX
    event."""
    b = TraceBuilder("3.25.0")
    b.process(PID, "python app.py")
    b.gpu(0)
    b.thread("main", tid=MAIN)
    b.thread("worker", tid=WORKER)
    b.add_row(
        "NVTX_EVENTS", start=500, end=None, eventType=75, text="mydom",
        globalTid=b._gtid(PID, MAIN), domainId=DOMAIN_ID,
    )  # fmt: skip

    def launch(name, at, kernel_start, kernel_ns):
        cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 1_000, pid=PID, tid=MAIN)
        b.kernel(name, start=kernel_start, end=kernel_start + kernel_ns, correlation_id=cid)

    b.nvtx_range("outer", start=1_000, end=100_000, pid=PID, tid=MAIN)
    launch("k_outer", 2_000, 5_000, 3_000)
    b.nvtx_range("dom_range", start=20_000, end=40_000, pid=PID, tid=MAIN, domain_id=DOMAIN_ID)
    launch("k_dom", 25_000, 30_000, 7_000)
    b.nvtx_range("reg_range", start=45_000, end=60_000, pid=PID, tid=MAIN, registered=True)
    launch("k_reg", 50_000, 52_000, 4_000)
    b.nvtx_range(
        "se_cross", start=130_000, end=200_000, pid=PID, tid=MAIN, event_type=60,
        endGlobalTid=b._gtid(PID, WORKER),
    )  # fmt: skip
    launch("k_cross", 140_000, 150_000, 5_000)
    b.nvtx_range("open_range", start=500_000, end=None, pid=PID, tid=MAIN)
    launch("k_open", 510_000, 520_000, 9_000)
    launch("k_none", 600_000, 610_000, 1_000)
    b.nvtx_mark("late_mark", at=LAST_NVTX, pid=PID, tid=MAIN)
    return b.write(path)


@pytest.fixture(scope="module")
def views(tmp_path_factory):
    return build_nvtx_views(tmp_path_factory.mktemp("views") / "views.sqlite")


def _nvtx_rows(events):
    rows = events.filter(kind="nvtx").select("start_ns", "duration_ns", "tid", "name").rows()
    return [(start, start + duration, tid, name) for start, duration, tid, name in rows]


@pytest.mark.parametrize("limit", [None, 100])
def test_timeline_has_every_range_as_nvtx_names_it(views, limit):
    # limit=None reads every row; limit=100 places the page by counting rows per bin first
    with tracelens.open(views) as trace:
        result = trace.timeline(limit=limit)
    assert _nvtx_rows(result.events) == NVTX_ROWS
    assert result.total == result.events.height


def test_timeline_pages_count_the_open_range(views):
    with tracelens.open(views) as trace:
        whole = trace.timeline().events
        pages = [trace.timeline(limit=3, offset=k) for k in range(0, whole.height, 3)]
    assert all(page.total == whole.height for page in pages)
    paged = [row for page in pages for row in page.events.rows()]
    assert paged == whole.rows()


def test_timeline_window_keeps_the_open_range(views, capsys):
    rc, out, err = run_cli(["timeline", str(views), "--start", "400us", "-f", "csv"], capsys)
    assert rc == 0, err
    assert f"500000,{LAST_NVTX - 500_000},nvtx,,,{PID},{MAIN},,,,open_range" in out.splitlines()


def test_stakeout_nvtx_is_the_projected_innermost_range(views):
    with tracelens.open(views) as trace:
        launches = trace.stakeout("k_").launches
        by_kernel = dict(launches.select("name", "nvtx").rows())
    assert by_kernel == dict(INNERMOST)


def test_stakeout_agrees_with_census_nvtx(views):
    with tracelens.open(views) as trace:
        held = trace.census(nvtx="open_range")["name"].to_list()
        labelled = trace.stakeout("k_").launches.filter(nvtx="open_range")["name"].to_list()
        assert sorted(held) == sorted(labelled) == ["k_none", "k_open"]
        with pytest.raises(UsageError, match="end on another thread"):
            trace.census(nvtx="se_cross")


def test_report_nvtx_lane_has_the_open_range(views):
    with tracelens.open(views) as trace:
        lane = activity.nvtx_ranges(trace, 0, LAST_NVTX, limit=10)
    rows = [(s, e, name) for s, e, name in lane.frame.select("start", "end", "label").rows()]
    assert rows == [(s, e, name) for s, e, _tid, name in NVTX_ROWS]
    assert not lane.more
