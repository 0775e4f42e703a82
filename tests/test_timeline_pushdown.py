"""timeline pages read only the stretch of the trace they can reach (timeline_page_rows.sql
places the page by counting rows per time bin; timeline_events.sql reads from $from_ns to
$bound_ns): every page must equal the same rows cut from one unpaged run, on an adversarial
trace (overlapping streams, kernels spanning others and bin edges, ties of equal starts,
idle gaps on several devices, copies, memsets, NVTX ranges, API calls) with bins narrow
enough that pages start and end across many of them, and on the real exports."""

from __future__ import annotations

import random

import pytest
from conftest import has_cuda_work, needs_shared, shared_traces

import tracelens
from tracelens import timeline as timeline_module
from tracelens.filters import EventFilter


def _adversarial(tmp_path) -> str:
    synth = pytest.importorskip("tracelens.synth")
    rng = random.Random(14)
    b = synth.TraceBuilder("3.25.0")
    b.process(100, "python a.py")
    b.process(200, "python b.py")
    t = 1_000_000
    for i in range(400):
        pid = 100 if i % 3 else 200
        device = i % 3
        start = t + rng.choice((0, 0, 500, 3_000, 150_000))  # ties, overlaps, idle gaps
        dur = rng.choice((1_000, 5_000, 40_000, 400_000))  # some span many others
        cid = b.runtime("cudaLaunchKernel_v7000", start=start - 4_000, end=start - 1_000, pid=pid)
        b.kernel(
            f"k{i % 7}", start=start, end=start + dur, pid=pid, device=device,
            stream=7 + i % 2, correlation_id=cid,
        )  # fmt: skip
        if i % 5 == 0:  # an exact tie with another device's kernel
            b.kernel("tie", start=start, end=start + 700, pid=pid, device=(device + 1) % 3,
                     stream=9, correlation_id=cid)  # fmt: skip
        if i % 11 == 0:
            c = b.runtime("cudaMemcpyAsync_v3020", start=start - 3_000, end=start, pid=pid)
            b.memcpy("DtoD", 4096, start=start + 10, end=start + 2_000, pid=pid, device=device,
                     correlation_id=c)  # fmt: skip
        if i % 13 == 0:
            c = b.runtime("cudaMemsetAsync_v3020", start=start - 2_000, end=start, pid=pid)
            b.memset(512, start=start, end=start + 800, pid=pid, device=device, correlation_id=c)
        if i % 17 == 0:
            b.nvtx_range(f"step {i}", start=start - 5_000, end=start + 90_000, pid=pid)
        t = start + rng.choice((100, 2_000, 20_000))
    path = tmp_path / "adversarial.sqlite"
    b.write(path)
    return str(path)


def _pages_equal_slices(trace, pages, **options) -> None:
    full = trace.timeline(limit=0, **options)
    rows = full.events.rows()
    assert full.total == len(rows)
    events = full.events.filter(full.events["kind"] != "gap").height
    for limit, offset in pages:
        page = trace.timeline(limit=limit, offset=offset, **options)
        assert page.events.rows() == rows[offset : offset + limit], (limit, offset, options)
        assert (page.total, page.events_total) == (len(rows), events)


# first rows, rows across the bins of the tests below (1 ns bins: every distinct start its
# own bin), the last rows, and past the end (the adversarial trace has 587 rows by default)
PAGES = [(1, 0), (100, 0), (7, 3), (1, 49), (1, 50), (3, 148), (60, 295), (250, 300)] + [
    (1, 586), (2, 585), (10, 10_000)
]  # fmt: skip

OPTIONS = [
    {},
    {"api": True, "gap_ns": 0},
    {"where": EventFilter(device=1)},
    {"where": EventFilter(stream=8, pid=100), "gap_ns": 1_000},
    # windows that start inside a long kernel and inside an idle gap
    {"where": EventFilter(start_ns=1_200_000, end_ns=3_000_000)},
    {"where": EventFilter(start_ns=2_000_000), "api": True},
    {"gap_ns": 10**12},  # one bin of gaps for the whole trace: no gap rows at all
]


# bins of 1 ns (every start its own bin), a few events, many, and the whole trace
@pytest.mark.parametrize("bin_ns", [1, 3_000, 10**6, 10**12])
def test_every_page_is_the_slice(tmp_path, monkeypatch, bin_ns):
    monkeypatch.setattr(timeline_module, "PAGE_BIN_NS", bin_ns)
    with tracelens.open(_adversarial(tmp_path)) as trace:
        for options in OPTIONS:
            _pages_equal_slices(trace, PAGES, **options)


def test_page_past_the_end_counts_every_row(tmp_path):
    with tracelens.open(_adversarial(tmp_path)) as trace:
        total = trace.timeline(limit=0).total
        page = trace.timeline(limit=5, offset=total)
        text = timeline_module.render(page, fmt="table", timeunit="ns", source="x")
        # no row at all: nothing to count before the page either
        empty = trace.timeline(limit=5, offset=2, where=EventFilter(start_ns=10**12))
    assert (page.events.height, page.total) == (0, total)
    assert text.rstrip().splitlines()[-1] == f"no rows (of {total:,})"
    assert (empty.events.height, empty.total, empty.events_total) == (0, 0, 0)


@needs_shared
@pytest.mark.parametrize("path", shared_traces(), ids=lambda p: p.name)
def test_pages_on_real_traces(path, monkeypatch):
    if not has_cuda_work(path):
        pytest.skip("no CUDA work")
    monkeypatch.setattr(timeline_module, "PAGE_BIN_NS", 50_000)
    with tracelens.open(path) as trace:
        _pages_equal_slices(trace, [(50, 0), (20, 333), (200, 1_000), (10, 2_600)])
