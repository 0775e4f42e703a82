"""Golden tests of the queries behind the command line's hints (gpu_work_ids.sql)."""

from __future__ import annotations

import pytest

from queries.golden import assert_golden

synth = pytest.importorskip("tracelens.synth")


def test_gpu_work_ids_lists_devices_streams_and_processes_of_all_work(tmp_path):
    b = synth.TraceBuilder("3.25.0")
    b.process(7, "a")
    b.process(9, "b")
    c = b.runtime("cudaLaunchKernel_v7000", start=1, end=2, pid=7)
    b.kernel("k", start=3, end=4, correlation_id=c, pid=7, device=1, stream=13)
    b.memcpy("HtoD", 64, start=5, end=6, pid=9, device=0, stream=7)
    b.memset(64, start=7, end=8, pid=9, device=0, stream=7)
    assert_golden(b.write(tmp_path / "t.sqlite"), "gpu_work_ids", "three_kinds")
