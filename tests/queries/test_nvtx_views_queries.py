"""Golden CSVs of the queries that show NVTX ranges outside the nvtx command (the timeline's
rows and page counts, the report's NVTX lane) on the trace of tests/test_timeline_nvtx_ranges
.py: a range left open at the end of the capture (open_range: 500 us to the last NVTX event
at 700 us), a range in the named domain 'mydom' (mydom:dom_range), a registered string
(reg_range) and a start/end range that ended on another thread (se_cross, still a CPU
range here)."""

from __future__ import annotations

import pytest
from test_timeline_nvtx_ranges import build_nvtx_views

from queries.golden import assert_golden

NO_FILTER = dict(device=None, pid=None, stream=None, start_ns=None, end_ns=None, selection=None)


@pytest.fixture(scope="module")
def views(tmp_path_factory):
    return build_nvtx_views(tmp_path_factory.mktemp("views") / "views.sqlite")


def _nvtx_text(trace) -> None:
    trace.load_nvtx_text()


def test_timeline_events(views):
    # every row: the five ranges as nvtx names and times them, kernels and gaps
    assert_golden(
        views, "timeline_events", "nvtx_ranges", _nvtx_text, **NO_FILTER,
        origin_ns=0, api=False, gap_ns=100_000, name_kind="short",
        limit=None, offset=0, from_ns=None, bound_ns=None,
        edge_devices=None, edge_busy=None, edge_next=None,
    )  # fmt: skip


def test_timeline_page_rows(views):
    # from 400 us: the gap before k_open, the open range and its two kernels: 4 rows, 3 of
    # them events (the open range counted)
    assert_golden(
        views, "timeline_page_rows", "nvtx_ranges", _nvtx_text,
        **{**NO_FILTER, "start_ns": 400_000},
        api=False, gap_ns=100_000, bin_ns=100_000, offset=1, rows=3,
    )  # fmt: skip


def test_activity_nvtx_ranges(views):
    # the window from 150 us: se_cross (to 200 us) and the open range (to 700 us)
    assert_golden(
        views, "activity_nvtx_ranges", "open_range", _nvtx_text,
        t0=150_000, t1=800_000, min_ns=0, limit=5,
    )  # fmt: skip


def test_nvtx_event_kinds(views):
    # what nvtx says when it shows no range: the fixture's 4 push/pop ranges (outer,
    # mydom:dom_range, reg_range, open_range), its start/end range (se_cross) and its 2
    # other events (the domain's registration and late_mark)
    assert_golden(views, "nvtx_event_kinds", "views", _nvtx_text)
