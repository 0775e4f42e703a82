"""An API call or kernel whose name id StringIds lacks is named '<unknown string id N>' by one
rule (_shared.sql's string_or_id) in api, api --exec, timeline and stakeout alike (review8:
timeline --api gave such a call an empty name where api said '<unknown string id 99999>').
One process (pid 10), one GPU: call 1 cudaLaunchKernel_v7000 -> kernel 'kA'; call 2 with
nameId 99999 -> a kernel whose demangled name id is 88888 (its short name is 'kB')."""

from __future__ import annotations

import sqlite3

import pytest

from queries.golden import assert_golden
from tracelens.synth import TraceBuilder, global_tid

PID = 10
UNKNOWN_API, UNKNOWN_KERNEL = 99_999, 88_888


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.25.0")
    b.process(PID, "python x.py")
    b.gpu(0)
    c = b.runtime("cudaLaunchKernel_v7000", start=1_000, end=2_000, pid=PID, correlation_id=1)
    b.kernel("void kA(float*)", start=3_000, end=4_000, pid=PID, correlation_id=c)
    b.add_row("CUPTI_ACTIVITY_KIND_RUNTIME", start=5_000, end=6_000, eventClass=0,
              globalTid=global_tid(PID, PID), correlationId=2, nameId=UNKNOWN_API,
              returnValue=0)  # fmt: skip
    b.kernel("kB", start=7_000, end=9_000, pid=PID, correlation_id=2)
    path = b.write(tmp_path_factory.mktemp("unknown_names") / "unknown_names.sqlite")
    with sqlite3.connect(path) as db:  # the kernel's demangled name id points nowhere
        db.execute(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = ? WHERE correlationId = 2",
            [UNKNOWN_KERNEL],
        )
    return path


NO_FILTER = {"device": None, "pid": None, "stream": None, "start_ns": None, "end_ns": None}
TIMELINE = {
    "origin_ns": 0, "from_ns": None, "bound_ns": None, "edge_devices": None, "edge_busy": None,
    "edge_next": None, "offset": 0, "selection": None, "api": True, "gap_ns": 0, "limit": None,
}  # fmt: skip


def test_api_summary_names_an_unknown_id(trace_path):
    assert_golden(trace_path, "cuda_api_summary", "unknown_ids", pid=None)


def test_kernel_exec_summary_names_unknown_ids(trace_path):
    assert_golden(trace_path, "kernel_exec_summary", "unknown_ids", name_kind="demangled", pid=None)


def test_timeline_names_unknown_ids(trace_path):
    # the call with nameId 99999 and the kernel with demangled name id 88888, as api names
    # them (before: an empty API name)
    assert_golden(
        trace_path, "timeline_events", "unknown_ids", lambda t: t.load_nvtx_text(),
        name_kind="demangled", **NO_FILTER, **TIMELINE,
    )  # fmt: skip
