"""Every launch of a fingerprint is in exactly one path entry: the entries' launches, each
times the steps it covers (once when it covers none), add up to the document's "launches"
and, per device, to the kernels the trace holds there. Version 5 merged the launches
outside the steps (a warm-up, a step the capture started or ended inside, work between
steps) into a step's entry with the same sequence, where they had no step: a capture cut
mid-step then read 277 launches in its entries against "launches": 283.

Checked on generated jobs: one or two devices, one or two processes per device, steps in
NVTX ranges (flat or with phase ranges inside) or found by period, a warm-up, a kernel
between steps, the capture started and/or ended mid-step."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import tracelens
from tracelens.synth import TraceBuilder

PHASES = (
    ("forward", ("embed", "gemm_qkv", "attn", "gemm_out")),
    ("backward", ("gemm_out_dgrad", "attn_bwd", "gemm_qkv_dgrad")),
    ("optimizer", ("adam",)),
)
GAP_NS = 20_000  # between one process's launches


@dataclass(frozen=True)
class Job:
    devices: int
    processes: int  # per device
    steps: int
    ranges: str  # "none" (period steps), "steps" (a range per step), "nested" (phases too)
    warmup: int  # set-up kernels before the first step
    between: bool  # a kernel after every other step, outside its range
    start_cut: int | None  # the capture starts at this launch of the first process
    end_cut: int | None  # ... ends this many launches before its last one


def _launches(job: Job, proc: int) -> tuple[list[tuple], list[tuple]]:
    """One process's (host time, kernel, grid) launches and (label, start, end) ranges."""
    t = 1_000_000 + proc * 7_000  # processes interleave on the host
    launches, ranges = [], []
    for k in range(job.warmup):
        launches.append((t, f"setup_{k}", (1, 1, 1)))
        t += GAP_NS
    for step in range(job.steps):
        step_start = t
        t += 1_000
        for label, names in PHASES:
            phase_start = t
            for k, name in enumerate(names):
                launches.append((t, name, (64 + k, 1, 1)))
                t += GAP_NS
            ranges.append((label, phase_start, t - 1_000))
        ranges.append((f"ProfilerStep#{step}", step_start, t))
        t += 3_000
        if job.between and step % 2:
            launches.append((t, "log_metrics", (1, 1, 1)))
            t += GAP_NS
    return launches, ranges


def _build(path: Path, job: Job) -> dict[int, int]:
    """The job's trace at ``path``; the kernels it holds per device."""
    b = TraceBuilder("3.25.0")
    for device in range(job.devices):
        b.gpu(device)
    held: dict[int, int] = {}
    for device in range(job.devices):
        for p in range(job.processes):
            proc = device * job.processes + p
            pid = 5000 + proc
            b.process(pid, f"python train.py --rank {proc}")
            launches, ranges = _launches(job, proc)
            lo = launches[job.start_cut][0] if job.start_cut is not None else 0
            hi = launches[-1 - job.end_cut][0] if job.end_cut is not None else launches[-1][0] + 1
            for t, name, grid in launches:
                if lo <= t < hi:
                    cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 4_000, pid=pid)
                    b.kernel(f"void {name}(float*)", start=t + 10_000, end=t + 18_000, pid=pid,
                             device=device, stream=7 + p, correlation_id=cid, grid=grid)  # fmt: skip
                    held[device] = held.get(device, 0) + 1
            for label, start, end in ranges:
                nested = job.ranges == "nested" or label.startswith("ProfilerStep")
                if job.ranges != "none" and nested and lo <= start < hi:
                    b.nvtx_range(label, start=start, end=end if end < hi else None, pid=pid)
    b.write(path)
    return held


JOBS = st.builds(
    Job,
    devices=st.integers(1, 2),
    processes=st.integers(1, 2),
    steps=st.integers(3, 7),
    ranges=st.sampled_from(["none", "steps", "nested"]),
    warmup=st.integers(0, 3),
    between=st.booleans(),
    start_cut=st.one_of(st.none(), st.integers(1, 10)),
    end_cut=st.one_of(st.none(), st.integers(1, 10)),
)


def _in_entries(doc: dict) -> dict[int, int]:
    per_device: dict[int, int] = {}
    for entry in doc["paths"]:
        times = max(1, len(entry["steps"]))
        per_device[entry["device"]] = per_device.get(entry["device"], 0) + entry["launches"] * times
    return per_device


@settings(max_examples=25, deadline=None, derandomize=True)
@given(job=JOBS)
def test_every_launch_is_in_one_entry(job):
    with tempfile.TemporaryDirectory() as tmp:
        held = _build(Path(tmp) / "job.sqlite", job)
        with tracelens.open(Path(tmp) / "job.sqlite", cache=False) as trace:
            doc = tracelens.fingerprint(trace)
    assert doc["launches"] == sum(held.values())
    assert _in_entries(doc) == held, (doc["steps"], job)
    # the launches outside the steps of a device and region: one entry, with no steps
    outside = [(e["device"], tuple(e["region"])) for e in doc["paths"] if not e["steps"]]
    assert len(outside) == len(set(outside))


def test_a_capture_cut_mid_step_has_its_cut_launches_in_an_entry_of_their_own(tmp_path):
    """The capture ends inside step 4's backward: that step's range is left open, so it is
    no step, and its forward launches, in no step, have the sequence of a complete step's
    'forward': an entry with no steps, listed first (version 5 merged them into the step
    entry)."""
    job = Job(1, 1, 4, "nested", 0, False, None, 3)
    held = _build(tmp_path / "cut.sqlite", job)
    with tracelens.open(tmp_path / "cut.sqlite", cache=False) as trace:
        doc = tracelens.fingerprint(trace)
    assert doc["version"] == 12
    assert doc["steps"]["count"] == 3
    forward = [e for e in doc["paths"] if e["region"] == ["forward"]]
    assert [(e["steps"], e["launches"]) for e in forward] == [([], 4), ([1, 2, 3], 4)]
    # launched after the last step: the document says so (format version 10)
    assert forward[0].get("after") == 4 and "before" not in forward[0]
    assert _in_entries(doc) == held == {0: doc["launches"]}
