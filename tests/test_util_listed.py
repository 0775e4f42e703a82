"""util lists a device the export lists (TARGET_INFO_CUDA_DEVICE, or TARGET_INFO_GPU) that ran
no GPU work: span the window, busy 0, idle the span (before_first), utilization 0, and a
note; so `--fail-if 'util_min<0.5'` catches an idle GPU. Filters that name devices, a
process or a stream, or select work (--nvtx, --step), keep only the selected work's devices.

The fixture: process 77, GPUs 0 and 1 listed, two kernels on device 0 only:
  launch at 900 -> kernel [1000, 2000]; NVTX 'step' [2900, 3100]; launch at 3000 ->
  kernel [4000, 6000]. The window is the capture span [900, 6000] (the first launch to the
  last kernel's end): 5100 ns.
"""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from fixtures.builder import XMMA_GEMM
from queries.golden import assert_golden

import tracelens
from tracelens.filters import EventFilter
from tracelens.synth import TraceBuilder
from tracelens.util import gpu_time_accounting
from tracelens.util_listed import listed_devices

PID = 77
SPAN = 5100


def build(path, *, schema="3.24.18", gpus=(0, 1), cuda_device_rows=True):
    b = TraceBuilder(schema)
    b.process(PID, "python train.py")
    for g in gpus:
        b.gpu(g, bus_location=f"0000:{18 + g:02x}:00.0")
        if cuda_device_rows and b.has_table("TARGET_INFO_CUDA_DEVICE"):
            b.add_row("TARGET_INFO_CUDA_DEVICE", gpuId=g, cudaId=g, pid=PID)
    cid = b.runtime("cudaLaunchKernel_v7000", start=900, end=950, pid=PID)
    b.kernel(XMMA_GEMM, start=1000, end=2000, pid=PID, correlation_id=cid)
    b.nvtx_range("step", start=2900, end=3100, pid=PID)
    cid = b.runtime("cudaLaunchKernel_v7000", start=3000, end=3050, pid=PID)
    b.kernel(XMMA_GEMM, start=4000, end=6000, pid=PID, correlation_id=cid)
    b.write(path)
    return path


@pytest.fixture(scope="module")
def two_gpus(tmp_path_factory):
    return build(tmp_path_factory.mktemp("listed") / "two_gpus.sqlite")


def test_the_export_lists_both_devices(two_gpus):
    assert_golden(two_gpus, "util_listed_devices", "two_gpus", export_tables=True)
    with tracelens.open(two_gpus) as trace:
        assert listed_devices(trace) == [0, 1]


def test_an_idle_listed_device_has_a_row(two_gpus):
    with tracelens.open(two_gpus) as trace:
        util = gpu_time_accounting(trace)
    assert (util.start_ns, util.end_ns) == (900, 6000)
    rows = util.frame.to_dicts()
    assert [r["device"] for r in rows] == [0, 1]
    assert rows[0]["busy_ns"] == 3000
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
    assert util.idle_causes.filter(device=0)["time_ns"].sum() == SPAN - 3000
    assert any(n.startswith("device 1: ") and "ran no kernel" in n for n in util.notes)
    assert util.figures()["util_min"] == 0.0


def test_the_util_min_gate_catches_the_idle_gpu(two_gpus, capsys):
    rc, out, err = run_cli(["util", two_gpus, "--no-cache", "--fail-if", "util_min<0.5"], capsys)
    assert rc == 1 and "device 1: the export lists it" in out
    assert err == "tracelens: gate tripped: util_min<0.5 (util_min = 0)\n"


def test_every_format_lists_the_idle_gpu(two_gpus, capsys):
    rc, out, _ = run_cli(["util", two_gpus, "--no-cache", "--format", "csv"], capsys)
    assert rc == 0
    assert out.splitlines()[2] == f"1,{SPAN},0,{SPAN},0,0,0,0,0,0.0,0,0,{SPAN},0,0"
    rc, out, _ = run_cli(["util", two_gpus, "--no-cache", "--format", "json"], capsys)
    doc = json.loads(out)
    assert [d["device"] for d in doc["devices"]] == [0, 1]
    assert doc["devices"][1]["utilization"] == 0.0
    for fmt in ("table", "markdown"):
        rc, out, _ = run_cli(["util", two_gpus, "--no-cache", "--format", fmt], capsys)
        assert rc == 0 and "device 1: the export lists it" in out


@pytest.mark.parametrize(
    "where",
    [EventFilter(device=0), EventFilter(pid=PID), EventFilter(stream=7)],
    ids=["device", "pid", "stream"],
)
def test_a_filter_keeps_only_the_selected_devices(two_gpus, where):
    with tracelens.open(two_gpus) as trace:
        util = gpu_time_accounting(trace, where)
    assert util.frame["device"].to_list() == [0]
    assert not any(n.startswith("device 1") for n in util.notes)


def test_a_time_window_still_lists_the_idle_gpu(two_gpus):
    with tracelens.open(two_gpus) as trace:
        util = gpu_time_accounting(trace, EventFilter(start_ns=3500, end_ns=6000))
    assert util.frame.filter(device=1)["idle_ns"].to_list() == [2500]


def test_nvtx_selection_keeps_only_its_devices(two_gpus, capsys):
    rc, out, _ = run_cli(
        ["util", two_gpus, "--no-cache", "--nvtx", "step", "--format", "csv"], capsys
    )
    assert rc == 0 and [r.split(",")[0] for r in out.splitlines()[1:]] == ["0"]


def test_target_info_gpu_alone_lists_devices(tmp_path):
    """Exports without TARGET_INFO_CUDA_DEVICE (before 3.23): TARGET_INFO_GPU's ordinals."""
    path = build(tmp_path / "old.sqlite", schema="3.0.0")
    with tracelens.open(path) as trace:
        assert gpu_time_accounting(trace).frame["device"].to_list() == [0, 1]


def test_no_device_is_invented(tmp_path):
    """Only GPU 0 listed, or none: the frame holds the devices with work alone."""
    for name, gpus in (("one.sqlite", (0,)), ("none.sqlite", ())):
        path = build(tmp_path / name, gpus=gpus)
        with tracelens.open(path) as trace:
            assert gpu_time_accounting(trace).frame["device"].to_list() == [0]
