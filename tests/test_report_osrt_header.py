"""The report's header counts the OS runtime calls as `tracelens info` does (its osrt line):
where the export has their table, 'N OS runtime calls' after the CUDA API calls and NVTX
events; where it has none, nothing is said (most GPU captures do not trace them)."""

from __future__ import annotations

from test_advreport_header import header, kernels_only

import tracelens
from tracelens.report import build_report
from tracelens.synth import TraceBuilder


def with_osrt(path):
    b = TraceBuilder("3.23.3")
    b.process(77, "./app")
    b.gpu(0)
    cid = b.runtime("cudaLaunchKernel", start=1_000, end=2_000)
    b.kernel("k", start=3_000, end=8_000, correlation_id=cid)
    for i in range(3):
        b.osrt_call("poll", start=10_000 + i * 1_000, end=10_500 + i * 1_000, pid=77, tid=77)
    return b.write(path)


def test_header_counts_os_runtime_calls(tmp_path):
    with tracelens.open(with_osrt(tmp_path / "o.sqlite")) as t:
        rows = header(build_report(t))
    assert rows["CPU events"] == "1 CUDA API call · NVTX not captured · 3 OS runtime calls"


def test_header_says_nothing_of_os_runtime_calls_not_traced(tmp_path):
    with tracelens.open(kernels_only(tmp_path / "k.sqlite")) as t:
        rows = header(build_report(t))
    assert rows["CPU events"] == "3 CUDA API calls · NVTX not captured"


def test_header_busy_says_it_holds_graph_replays(tmp_path):
    # the 'not in this report' row says graph-level replays are in no kernel or memory
    # figure; the header's GPU busy (util's) holds them, and says so (found by advfilters)
    from fixtures.graph_replay import MS, write_replay_trace

    path = write_replay_trace(tmp_path / "g.sqlite", (1, 5), [(2 * MS, 4 * MS)])
    with tracelens.open(path) as t:
        rows = header(build_report(t))
    assert rows["span"].endswith("(GPU busy 4.00 ms with its CUDA graph replays)")
    assert rows["not in this report"].startswith(
        "1 CUDA graph replay (2.00 ms of GPU time) is not broken down by kernel"
    )
