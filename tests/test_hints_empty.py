"""tracelens.hints.why_empty reads the trace's span only when a window asks for it: the
span is a scan of every GPU record (1.5 CPU s of a 5M-kernel export read directly), which
findings paid whenever no rule fired, with no window at all."""

from __future__ import annotations

import pytest

import tracelens
from tracelens.filters import EventFilter
from tracelens.hints import why_empty
from tracelens.synth import TraceBuilder
from tracelens.trace import Trace


@pytest.fixture
def quiet(tmp_path):
    b = TraceBuilder("3.0.0")
    b.process(7, "python serve.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    cid = b.runtime("cudaLaunchKernel_v7000", start=1_000, end=1_010, pid=7)
    b.kernel("k", start=2_000, end=3_000, pid=7, device=0, stream=7, correlation_id=cid)
    return b.write(tmp_path / "quiet.sqlite")


def _span_read(monkeypatch) -> list[int]:
    reads: list[int] = []
    info = Trace.info

    def counted(self):
        reads.append(1)
        return info.fget(self)

    monkeypatch.setattr(Trace, "info", property(counted))
    return reads


def test_no_window_reads_no_span(quiet, monkeypatch):
    reads = _span_read(monkeypatch)
    with tracelens.open(quiet, cache=False) as trace:
        assert why_empty(trace, EventFilter()) is None
        assert why_empty(trace, EventFilter(device=0)) is None
    assert reads == []


def test_a_window_outside_the_span_is_still_explained(quiet, monkeypatch):
    reads = _span_read(monkeypatch)
    with tracelens.open(quiet, cache=False) as trace:
        said = why_empty(trace, EventFilter(start_ns=50_000))
    assert said is not None and said.startswith("window from ")
    assert "is outside the trace's span" in said
    assert reads
