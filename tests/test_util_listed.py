"""util lists a device a traced process had a CUDA context on (TARGET_INFO_CUDA_CONTEXT_INFO,
or TARGET_INFO_CUDA_NULL_STREAM before it) that ran no GPU work: span the window, busy 0,
idle the span (before_first), utilization 0, and a note; so `--fail-if 'util_min<0.5'`
catches an idle GPU. Such a device moves neither util, busy nor idle (nor the diff's time
accounting): those are over the devices busy in the window. The machine's GPU inventory
(TARGET_INFO_GPU) and the devices a process could see (TARGET_INFO_CUDA_DEVICE) add none.
Filters that name devices, a process or a stream, or select work (--nvtx, --step), keep only
the selected work's devices.

The fixture: process 77, two kernels on device 0 only:
  launch at 900 -> kernel [1000, 2000]; NVTX 'step' [2900, 3100]; launch at 3000 ->
  kernel [4000, 6000]. The window is the capture span [900, 6000] (the first launch to the
  last kernel's end): 5100 ns, 3000 of them busy on device 0.
"""

from __future__ import annotations

import json

import pytest
from conftest import needs_shared, run_cli
from fixtures.builder import XMMA_GEMM
from queries.golden import assert_golden

import tracelens
from tracelens.compare import diff
from tracelens.filters import EventFilter
from tracelens.synth import TraceBuilder
from tracelens.util import gpu_time_accounting
from tracelens.util_listed import opened_devices

PID = 77
SPAN = 5100
BUSY = 3000


def add_context(b: TraceBuilder, pid: int, device: int, context: int) -> None:
    """A CUDA context of ``pid`` on ``device``, as the export's schema records it."""
    ids = {"hwId": 0, "vmId": 0, "processId": pid, "deviceId": device, "contextId": context}
    if b.has_table("TARGET_INFO_CUDA_CONTEXT_INFO"):
        b.add_row("TARGET_INFO_CUDA_CONTEXT_INFO", nullStreamId=7, **ids)
    else:
        b.add_row("TARGET_INFO_CUDA_NULL_STREAM", streamId=7, **ids)


def build(path, *, schema="3.24.18", gpus=(0, 1), contexts=(0, 1), extra=()):
    """The fixture on a machine with ``gpus`` (TARGET_INFO_GPU, and TARGET_INFO_CUDA_DEVICE:
    the process sees them all), process 77 with a context on each of ``contexts``, and
    ``extra`` (pid, device, context id) contexts."""
    b = TraceBuilder(schema)
    b.process(PID, "python train.py")
    for g in gpus:
        b.gpu(g, bus_location=f"0000:{18 + g:02x}:00.0")
        if b.has_table("TARGET_INFO_CUDA_DEVICE"):
            b.add_row("TARGET_INFO_CUDA_DEVICE", gpuId=g, cudaId=g, pid=PID)
    for i, d in enumerate(contexts):
        add_context(b, PID, d, i + 1)
    for pid, d, context in extra:
        add_context(b, pid, d, context)
    cid = b.runtime("cudaLaunchKernel_v7000", start=900, end=950, pid=PID)
    b.kernel(XMMA_GEMM, start=1000, end=2000, pid=PID, correlation_id=cid)
    b.nvtx_range("step", start=2900, end=3100, pid=PID)
    cid = b.runtime("cudaLaunchKernel_v7000", start=3000, end=3050, pid=PID)
    b.kernel(XMMA_GEMM, start=4000, end=6000, pid=PID, correlation_id=cid)
    b.write(path)
    return path


@pytest.fixture(scope="module")
def two_contexts(tmp_path_factory):
    """GPUs 0 and 1, a context on each, work on device 0 only."""
    return build(tmp_path_factory.mktemp("listed") / "two_contexts.sqlite")


def test_the_context_tables_give_the_opened_devices(tmp_path):
    """Each schema's context table; a device with two contexts (two processes) once."""
    for schema, query in (
        ("3.24.18", "util_context_devices"),
        ("3.0.0", "util_null_stream_devices"),
    ):
        path = build(
            tmp_path / f"{schema}.sqlite", schema=schema, gpus=(0, 1, 2), contexts=(0, 2),
            extra=[(78, 0, 1)],
        )  # fmt: skip
        assert_golden(path, query, "two_processes", export_tables=True)
        with tracelens.open(path) as trace:
            assert opened_devices(trace) == [0, 2]


def test_an_opened_idle_device_has_a_row(two_contexts):
    with tracelens.open(two_contexts) as trace:
        util = gpu_time_accounting(trace)
    assert (util.start_ns, util.end_ns) == (900, 6000)
    rows = util.frame.to_dicts()
    assert [r["device"] for r in rows] == [0, 1]
    assert rows[0]["busy_ns"] == BUSY
    assert rows[1] == {
        "device": 1,
        "span_ns": SPAN,
        "busy_ns": 0,
        "idle_ns": SPAN,
        "compute_ns": 0,
        "communication_ns": 0,
        "exposed_communication_ns": 0,
        "memory_ns": 0,
        "exposed_memory_ns": 0,
        "utilization": 0.0,
    }
    idle1 = util.idle_causes.filter(device=1).to_dicts()
    assert idle1 == [{"device": 1, "cause": "before_first", "count": 1, "time_ns": SPAN}]
    # device 0's causes are unchanged and still add up to its idle time
    assert util.idle_causes.filter(device=0)["time_ns"].sum() == SPAN - BUSY
    assert any(n.startswith("device 1: ") and "CUDA context" in n for n in util.notes)


def test_util_min_counts_the_idle_device_and_the_aggregates_do_not(two_contexts, tmp_path):
    """util, busy, idle and the idle causes are device 0's alone, as in the same work
    exported with one context; util_min is device 1's 0."""
    one = build(tmp_path / "one_context.sqlite", contexts=(0,))
    with tracelens.open(two_contexts) as trace:
        figures = gpu_time_accounting(trace).figures()
    with tracelens.open(one) as trace:
        alone = gpu_time_accounting(trace).figures()
    assert figures["util_min"] == 0.0 and alone["util_min"] == BUSY / SPAN
    assert figures["util"] == BUSY / SPAN
    assert figures["idle_ms"] == (SPAN - BUSY) / 1e6
    assert figures["idle_before_first_ms"] == 100 / 1e6  # device 0: launch 900, kernel 1000
    assert figures | {"util_min": alone["util_min"]} == alone


def test_the_util_min_gate_catches_the_idle_gpu(two_contexts, capsys):
    rc, out, err = run_cli(
        ["util", two_contexts, "--no-cache", "--fail-if", "util_min<0.5", "--fail-if", "util<0.5"],
        capsys,
    )
    assert rc == 1 and "device 1: a traced process had a CUDA context on it" in out
    assert err == "tracelens: gate tripped: util_min<0.5 (util_min = 0)\n"


def test_every_format_lists_the_idle_gpu(two_contexts, capsys):
    rc, out, _ = run_cli(["util", two_contexts, "--no-cache", "--format", "csv"], capsys)
    assert rc == 0
    assert out.splitlines()[2] == f"1,{SPAN},0,{SPAN},0,0,0,0,0,0.0,0,0,{SPAN},0,0"
    rc, out, _ = run_cli(["util", two_contexts, "--no-cache", "--format", "json"], capsys)
    doc = json.loads(out)
    assert [d["device"] for d in doc["devices"]] == [0, 1]
    assert doc["devices"][1]["utilization"] == 0.0
    for fmt in ("table", "markdown"):
        rc, out, _ = run_cli(["util", two_contexts, "--no-cache", "--format", fmt], capsys)
        assert rc == 0 and "device 1: a traced process had a CUDA context on it" in out


@pytest.mark.parametrize("schema", ["3.24.18", "3.0.0"])
def test_a_machine_inventory_adds_no_device(tmp_path, schema):
    """8 GPUs on the machine (and, 3.23+, all 8 visible to the process), one context on
    GPU 0: util lists device 0 alone, with the figures of the same work on a 1-GPU box."""
    eight = build(tmp_path / "eight.sqlite", schema=schema, gpus=range(8), contexts=(0,))
    one = build(tmp_path / "one.sqlite", schema=schema, gpus=(0,), contexts=(0,))
    with tracelens.open(eight) as trace:
        assert opened_devices(trace) == [0]
        util = gpu_time_accounting(trace)
    with tracelens.open(one) as trace:
        alone = gpu_time_accounting(trace)
    assert util.frame["device"].to_list() == [0]
    assert util.figures() == alone.figures()
    assert not any("CUDA context" in n for n in util.notes)


def test_an_export_without_context_tables_adds_no_device(tmp_path):
    path = build(tmp_path / "none.sqlite", gpus=range(8), contexts=())
    with tracelens.open(path) as trace:
        assert opened_devices(trace) == []
        assert gpu_time_accounting(trace).frame["device"].to_list() == [0]


def test_the_diff_sums_the_busy_devices_alone(two_contexts, tmp_path):
    """The same work with one context and with a context left idle on GPU 1: the same time
    accounting and device count, and util/idle gates that hold on one hold on the other."""
    one = build(tmp_path / "one_context.sqlite", contexts=(0,))
    result = diff(one, two_contexts)
    side_a, side_b = result.sides
    assert side_a.time == side_b.time and side_a.time["idle_ns"] == SPAN - BUSY
    assert side_a.devices == side_b.devices == 1
    assert result.figures["util"] == result.figures["util_a"] == BUSY / SPAN
    assert result.figures["util_min"] == 0.0


@pytest.mark.parametrize(
    "where",
    [EventFilter(device=0), EventFilter(pid=PID), EventFilter(stream=7)],
    ids=["device", "pid", "stream"],
)
def test_a_filter_keeps_only_the_selected_devices(two_contexts, where):
    with tracelens.open(two_contexts) as trace:
        util = gpu_time_accounting(trace, where)
    assert util.frame["device"].to_list() == [0]
    assert not any(n.startswith("device 1") for n in util.notes)


def test_a_time_window_still_lists_the_idle_gpu(two_contexts):
    with tracelens.open(two_contexts) as trace:
        util = gpu_time_accounting(trace, EventFilter(start_ns=3500, end_ns=6000))
    assert util.frame.filter(device=1)["idle_ns"].to_list() == [2500]


def test_nvtx_selection_keeps_only_its_devices(two_contexts, capsys):
    rc, out, _ = run_cli(
        ["util", two_contexts, "--no-cache", "--nvtx", "step", "--format", "csv"], capsys
    )
    assert rc == 0 and [r.split(",")[0] for r in out.splitlines()[1:]] == ["0"]


# What each shared export's context table says: the devices its processes opened. Every
# one ran work on each device it opened (balinski_2gpu's TARGET_INFO_CUDA_DEVICE lists
# cudaId 0 and 1 for its process, gaussian_7gpu's TARGET_INFO_GPU 7 GPUs: one context each).
SHARED_OPENED = {
    "nsys2020.5_kmeans_51k": [0],
    "nsys2020.5_openacc_1935k": [0],
    "nsys2021.3_cpu_only_no_cuda": [],
    "nsys2022.1_dlprof_aten_nvtx": [0],
    "nsys2022.2_unified_memory": [0],
    "nsys2022.4_gaussian_7gpu": [0],
    "nsys2022.4_trt_nvtx_only": [],
    "nsys2023.3_nussinov_mig": [0],
    "nsys2024.6_a100_2.7B_cudagraph": [0],
    "nsys2024.6_a100_2.7B_nvtx": [0],
    "nsys2024.6_h200_nvfuser_nvtx": [0],
    "nsys2025.5_balinski_2gpu": [0],
    "nsys2026.1_mock_2k": [0],
}


@needs_shared
def test_the_shared_exports_opened_devices(trace_copies):
    assert sorted(trace_copies) == sorted(SHARED_OPENED)
    for stem, path in trace_copies.items():
        with tracelens.open(path) as trace:
            assert opened_devices(trace) == SHARED_OPENED[stem], stem


@needs_shared
@pytest.mark.parametrize("stem", ["nsys2022.4_gaussian_7gpu", "nsys2025.5_balinski_2gpu"])
def test_a_shared_multi_gpu_export_lists_its_busy_device_alone(trace_copies, stem, capsys):
    """gaussian_7gpu: 7 GPUs in the inventory, work and a context on device 0 (util 0.939,
    `util<0.8` holds); balinski_2gpu: 2 GPUs visible to the process, one context."""
    with tracelens.open(trace_copies[stem]) as trace:
        util = gpu_time_accounting(trace)
    assert util.frame["device"].to_list() == [0]
    if stem == "nsys2022.4_gaussian_7gpu":
        assert round(util.figures()["util"], 4) == 0.9389
        rc, _, err = run_cli(
            ["util", trace_copies[stem], "--no-cache", "--fail-if", "util<0.8"], capsys
        )
        assert (rc, err) == (0, "")
