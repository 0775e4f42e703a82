"""Golden tests of queries/_nvtx_matched_ranges.sql (what an --nvtx pattern matches:
nvtx_label_matches and nvtx_matched_ranges(), which nvtx_matching_ranges,
nvtx_selected_work and util_projection call) on one tiny trace built here. Process 7000:

thread 7000 (push/pop)                      thread 7001 (start/end)
  1 sel    [1000, 2000]                       7 sel [1100, 1300] ends on thread 7000
  2 sel    [1000, 2500] (same start as 1)     8 sel [2000, 2100]
  3 sel    [1500, 1800] (inside 2)            9 sel [6000, -] (never closed)
  4 other  [1200, 5000]
  5 sel    [3000, 4000]
  6 layer  [3500, 3600] in domain 3 ('dom', eventType 75)
a mark at 9000 (the last NVTX time: where the open range ends).
"""

from __future__ import annotations

import pytest

import tracelens
from queries.golden import assert_golden
from tracelens.filters import glob_regex
from tracelens.synth import TraceBuilder, global_tid

PID = 7000
DOMAIN = 3


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python serve.py")
    main, side = PID, PID + 1
    ranges = [
        ("sel", 1000, 2000, main, 59, {}),
        ("sel", 1000, 2500, main, 59, {}),
        ("sel", 1500, 1800, main, 59, {}),
        ("other", 1200, 5000, main, 59, {}),
        ("sel", 3000, 4000, main, 59, {}),
        ("layer", 3500, 3600, main, 59, {"domain_id": DOMAIN}),
        ("sel", 1100, 1300, side, 60, {"endGlobalTid": global_tid(PID, main)}),
        ("sel", 2000, 2100, side, 60, {}),
    ]
    for text, start, end, tid, kind, extra in ranges:
        b.nvtx_range(text, start=start, end=end, tid=tid, event_type=kind, **extra)
    b.add_row("NVTX_EVENTS", start=6000, end=None, eventType=60, text="sel",
              globalTid=global_tid(PID, side))  # fmt: skip
    b.add_row("NVTX_EVENTS", start=0, end=None, eventType=75, text="dom",
              domainId=DOMAIN, globalTid=global_tid(PID, main))  # fmt: skip
    b.nvtx_mark("mark", at=9000, tid=main)
    return b.write(tmp_path_factory.mktemp("nvtx_matched") / "nvtx_matched.sqlite")


def test_matched_ranges(trace_path):
    # Thread 7000: 1 and 2 start together (one row, the longer's end 2500), 3 inside them
    # (reach 2500), 5 after them (reach 4000); not 'other' or 'layer'. Thread 7001: not 7
    # (ended on thread 7000: nsys does not project it), 8, and 9 open until the mark's 9000.
    assert_golden(
        trace_path, "_nvtx_matched_ranges", "ranges_sel", tracelens.Trace.load_nvtx_text,
        probe="ranges", label_re=glob_regex("sel"),
    )  # fmt: skip


@pytest.mark.parametrize("pattern", ["dom:lay*", "layer"])
def test_matched_ranges_by_label_or_domain_name(trace_path, pattern):
    # 'layer' is matched by its own label and by its domain-qualified name 'dom:layer'
    # alike: the one row [3500, 3600].
    assert_golden(
        trace_path, "_nvtx_matched_ranges", "ranges_layer", tracelens.Trace.load_nvtx_text,
        probe="ranges", label_re=glob_regex(pattern),
    )  # fmt: skip


def test_matched_ranges_none(trace_path):
    # A pattern no range matches: no rows (the header only).
    assert_golden(
        trace_path, "_nvtx_matched_ranges", "ranges_none", tracelens.Trace.load_nvtx_text,
        probe="ranges", label_re=glob_regex("dom:sel"),
    )  # fmt: skip


def test_label_matches(trace_path):
    # A full match of the label or of the name: 'layer' and 'dom:layer' and 'dom:.*' match,
    # 'lay' and 'dom' (parts) do not; a range without a label matches nothing (NULL).
    assert_golden(
        trace_path, "_nvtx_matched_ranges", "label_matches", tracelens.Trace.load_nvtx_text
    )


def test_matched_range_ids(trace_path):
    # queries/nvtx_matched_range_ids.sql (the report's NVTX tree of an --nvtx selection):
    # the RangeIds (NVTX_EVENTS rowids, in insertion order: 1-9 as listed above, then the
    # domain's registration row 10 and the mark 11) of every range labelled 'sel' that
    # nvtx_ranges() holds: 1, 2, 3 and 5 on thread 7000; 7, 8 and the open 9 on thread 7001.
    # Not 'other' (4), 'layer' (6), the domain row or the mark.
    assert_golden(
        trace_path, "nvtx_matched_range_ids", "sel", tracelens.Trace.load_nvtx_text,
        label_re=glob_regex("sel"),
    )  # fmt: skip


def test_matched_range_ids_by_domain_name(trace_path):
    # 'dom:lay*' names range 6 by its domain-qualified name; no other range.
    assert_golden(
        trace_path, "nvtx_matched_range_ids", "domain", tracelens.Trace.load_nvtx_text,
        label_re=glob_regex("dom:lay*"),
    )  # fmt: skip
