"""Period steps of a GPU-bound loop start where the host paused, not at the launch the GPU
happened to idle a microsecond longer before (tracelens.steps_phase.period_phase).

The host runs ahead of the GPU and the queue never drains: the GPU idles about as long
before every launch. The shared CUDA-graph export (10 iterations of a copy, two fills and
one graph replay) was split into 9 steps started at the replay (3.5 us of GPU idle time
before it against 2.6 us before the copy), its first copy and fills and its last replay
outside every step. The host paused 400-700 us before each iteration's copy launch call and
1-60 us before the others."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import TRACES, needs_shared

import tracelens
from tracelens.synth import TraceBuilder

US = 1_000
# (kernel, GPU duration, GPU idle before it, host pause before its launch call): the GEMM
# idles longest on the GPU (1.5 us against 1 us) but the loop's boundary is before the copy
MOTIF = [
    ("void copy_inputs(float*)", 20 * US, 1_000, 300 * US),
    ("void fill_kernel(float*)", 10 * US, 1_000, 5 * US),
    ("void gemm_kernel(float*)", 900 * US, 1_500, 5 * US),
]


EMA = ("void opt_ema(float*)", 5 * US, 1_000, 5 * US)


def build(path, iterations: int = 12, host_pause: bool = True, stall: int = 0, ema: int = 0):
    """One process on device 0 looping over MOTIF; ``host_pause`` False: the host pauses as
    long before every launch call (no host evidence either); ``stall``: extra GPU idle time
    before the fill of the capture's second iteration (one stall); ``ema``: every ``ema``th
    iteration also launches EMA at its end."""
    b = TraceBuilder("3.24.18")
    b.process(9, "python decode.py")
    b.gpu(0)
    host, gpu = 1_000 * US, 2_000 * US
    for i in range(iterations):
        extra = [EMA] if ema and i % ema == ema - 1 else []
        for k, (name, dur, idle, pause) in enumerate(MOTIF + extra):
            host += pause if host_pause else 5 * US
            c = b.runtime("cudaLaunchKernel_v7000", start=host, end=host + 2 * US, pid=9)
            host += 2 * US
            gpu += idle + (stall if i == 1 and k == 1 else 0)
            b.kernel(name, start=gpu, end=gpu + dur, pid=9, correlation_id=c)
            gpu += dur
    return b.write(path)


def _first_names(path) -> tuple[int, set[str]]:
    """(steps, the names of the kernels each step starts with)."""
    with tracelens.open(path) as trace:
        frame = trace.steps().frame
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    names = dict(
        con.execute(
            "SELECT k.start, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL AS k"
            " JOIN StringIds AS s ON s.id = k.demangledName"
        )
    )
    con.close()
    return frame.height, {names[start] for start in frame["start_ns"]}


HOST_PHASED = "each step from the launch the host paused longest before (the GPU idled alike)"


def test_steps_start_where_the_host_paused(tmp_path):
    path = build(tmp_path / "loop.sqlite")
    count, first = _first_names(path)
    assert (count, first) == (12, {"void copy_inputs(float*)"})
    with tracelens.open(path) as trace:  # how the steps were found is said
        assert HOST_PHASED in trace.steps().detail


def test_without_host_evidence_the_gpu_idle_time_decides(tmp_path):
    # no position stands out on either side: the longest mean GPU idle time, as before
    path = build(tmp_path / "flat.sqlite", host_pause=False)
    count, first = _first_names(path)
    assert (count, first) == (11, {"void gemm_kernel(float*)"})
    with tracelens.open(path) as trace:
        assert "host paused" not in trace.steps().detail


def test_one_stall_does_not_make_a_boundary(tmp_path):
    # a 300 us stall before one fill lifts the fill's mean GPU idle time far above the
    # others' (its median stays 1 us): the host's pauses still phase the steps
    count, first = _first_names(build(tmp_path / "stall.sqlite", stall=300 * US))
    assert (count, first) == (12, {"void copy_inputs(float*)"})


def test_an_optional_kernel_in_a_gpu_bound_loop(tmp_path):
    # every 4th iteration launches an EMA update too: the exact period is 4 iterations and
    # the EMA (13 launches), whose 4 copies wait alike on the host; the iteration is the
    # shorter motif started where the host paused (no launch waits longer on the GPU)
    path = build(tmp_path / "ema.sqlite", iterations=24, ema=4)
    count, first = _first_names(path)
    assert (count, first) == (24, {"void copy_inputs(float*)"})
    with tracelens.open(path) as trace:
        detail = trace.steps().detail
    assert HOST_PHASED in detail and "with void opt_ema(float*) too in 6" in detail


@needs_shared
def test_the_cuda_graph_export_has_its_ten_iterations():
    path = TRACES / "nsys2024.6_a100_2.7B_cudagraph.sqlite"
    if not path.exists():
        pytest.skip(f"{path.name} is not among the shared traces")
    with tracelens.open(path) as trace:
        steps = trace.steps()
    assert steps.frame.height == 10
    assert "4 launches outside" not in steps.detail
    # each step starts at the iteration's copy kernel (33,858,300 ns: the capture's first
    # launch) and ends with its graph replay
    assert steps.frame["start_ns"][0] == 33_858_300
