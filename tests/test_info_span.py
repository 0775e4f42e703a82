"""info's span counts activity, not NVTX naming events (review): nsys stamps a domain's
creation (eventType 75) when the program made it, which can be long before the capture
started (the shared TensorRT export has two at -10.6 s, its ranges from 9.4 ms), and an
18 s "duration" for a 7.5 s capture misleads."""

from __future__ import annotations

import pytest
from conftest import run_cli

import tracelens
from tracelens.synth import TraceBuilder


def _build(path) -> None:
    b = TraceBuilder("3.25.0")
    b.process(100, "trtexec")
    # the domain was created 10 s before the capture started
    b.add_row("NVTX_EVENTS", start=-10_000_000_000, end=None, eventType=75, text="TensorRT",
              globalTid=b._gtid(100, None), domainId=1)  # fmt: skip
    b.nvtx_range("infer", start=2_000_000, end=5_000_000, pid=100, domain_id=1)
    b.nvtx_mark("done", at=6_000_000, pid=100)
    b.write(path)


@pytest.mark.parametrize("cached", [False, True])
def test_the_span_starts_at_the_first_range_not_the_domain_creation(tmp_path, cached, cache_dir):
    path = tmp_path / "trt.sqlite"
    _build(path)
    with tracelens.open(path, cache=cached) as trace:
        info = trace.info
        assert (info.start_ns, info.end_ns) == (2_000_000, 6_000_000)
        assert info.count("nvtx") == 3  # every NVTX event is still counted
        assert trace.origin_ns == 2_000_000


def test_the_info_command_says_the_capture_span(tmp_path, capsys):
    path = tmp_path / "trt.sqlite"
    _build(path)
    code, out, _ = run_cli(["--no-cache", "info", path], capsys)
    assert code == 0
    assert "span       2.00 ms → 6.00 ms (duration 4.00 ms, from session start)" in out
