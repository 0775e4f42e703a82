"""The header of a trace whose CUDA work is only copies or memsets gives its GPU busy time,
as its utilization table below does and as `tracelens util` prints it: the header left it
out ('span 165.4 µs', no busy) for a trace without kernels. Found by advreport."""

from __future__ import annotations

from test_advreport_header import header

import tracelens
from tracelens.report import build_report
from tracelens.synth import TraceBuilder
from tracelens.units import fmt_ns


def memsets_only(path):
    b = TraceBuilder("3.23.3")
    b.process(11, "./loader")
    b.gpu(0)
    t = 1_000_000
    for _ in range(6):
        b.runtime("cudaMemsetAsync", start=t - 400, end=t - 100, pid=11)
        b.memset(4096, start=t, end=t + 10_000)
        t += 30_000
    return b.write(path)


def test_header_of_a_trace_without_kernels_gives_its_busy_time(tmp_path):
    with tracelens.open(memsets_only(tmp_path / "m.sqlite")) as t:
        html = build_report(t)
        busy = int(t.util().frame["busy_ns"].sum())
        span = t.info.duration_ns
    assert busy == 60_000
    assert header(html)["span"] == f"{fmt_ns(span)} (GPU busy {fmt_ns(busy)})"
