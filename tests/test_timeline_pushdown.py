"""timeline pages read only the stretch of the trace they can reach (timeline_page_bound.sql
and $bound_ns): every bounded page must equal the same rows cut from the whole sorted union,
on an adversarial trace (overlapping streams, kernels spanning others, ties, idle gaps on
several devices, copies, memsets, NVTX ranges, API calls) and on the real exports."""

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


def _page_equals_slice(trace, monkeypatch, *, limit, offset, **options) -> None:
    monkeypatch.setattr(timeline_module, "EXACT_TOTAL_MAX_EVENTS", 10**9)
    full = trace.timeline(limit=0, **options).events
    monkeypatch.setattr(timeline_module, "EXACT_TOTAL_MAX_EVENTS", 0)
    page = trace.timeline(limit=limit, offset=offset, **options)
    expected = full.slice(offset, limit)
    assert page.events.rows() == expected.rows(), (limit, offset, options)
    assert page.events_total == full.filter(full["kind"] != "gap").height
    if page.events_total >= offset + limit:
        assert page.total is None  # bounded: counting would read the whole trace
    else:
        assert page.total == full.height  # the page reaches the end: no bound, exact


PAGES = [(1, 0), (5, 0), (30, 7), (100, 0), (25, 300), (50, 470), (10, 10_000)]


@pytest.mark.parametrize(("limit", "offset"), PAGES)
def test_bounded_page_is_the_slice(tmp_path, monkeypatch, limit, offset):
    with tracelens.open(_adversarial(tmp_path)) as trace:
        origin = trace.origin_ns
        for options in (
            {},
            {"api": True, "gap_ns": 0},
            {"where": EventFilter(device=1)},
            {"where": EventFilter(stream=8, pid=100), "gap_ns": 1_000},
            # windows that start inside a long kernel and inside an idle gap
            {"where": EventFilter(start_ns=origin + 1_200_000, end_ns=origin + 3_000_000)},
            {"where": EventFilter(start_ns=origin + 2_000_000), "api": True},
        ):
            _page_equals_slice(trace, monkeypatch, limit=limit, offset=offset, **options)


def test_bounded_caption_says_what_is_known(tmp_path, monkeypatch):
    monkeypatch.setattr(timeline_module, "EXACT_TOTAL_MAX_EVENTS", 0)
    with tracelens.open(_adversarial(tmp_path)) as trace:
        result = trace.timeline(limit=3)
        text = timeline_module.render(result, fmt="table", timeunit="ns", source="x")
    assert result.total is None
    assert text.rstrip().splitlines()[-1] == (
        f"rows 1-3 ({result.events_total:,} events in all, plus the idle gaps between them); "
        "--offset 3 for the next"
    )


@needs_shared
@pytest.mark.parametrize("path", shared_traces(), ids=lambda p: p.name)
def test_bounded_pages_on_real_traces(path, monkeypatch):
    if not has_cuda_work(path):
        pytest.skip("no CUDA work")
    with tracelens.open(path) as trace:
        for limit, offset in ((50, 0), (20, 333)):
            _page_equals_slice(trace, monkeypatch, limit=limit, offset=offset)
