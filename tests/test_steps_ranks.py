"""Steps from NVTX ranges in a multi-process job are numbered per process, as period steps are
per device: step N is the Nth iteration of each rank, whichever rank started first. Numbered
across the ranks by start, a 2-rank job with 6 `train_step` ranges per rank had 12 steps,
`--step 4` was one rank's 2nd iteration, and the fingerprint (its step keys) changed when the
ranks' start order flipped, so `fingerprint --check` failed on identical work (review5 #3).
"""

from __future__ import annotations

import polars as pl
import pytest
from conftest import run_cli

import tracelens
from tracelens import fingerprint as fp
from tracelens.synth import TraceBuilder

STEPS = 6
NAMES = ("void gemm(float*)", "void attn(float*)", "void gemm2(float*)")
RANKS = ((700, 0), (800, 1))  # (pid, device)


def _job(path, *, first: int = 700, split_k_from: int | None = None):
    """Two ranks (pid 700 on GPU 0, pid 800 on GPU 1), each with STEPS `train_step` ranges
    on its main thread holding one launch of each of NAMES; correlation ids restart at 1 in
    each process (CUPTI's are per process), so they collide across the ranks. ``first``: the
    rank that starts first (the other 300 us later, its ranges overlapping the first's).
    ``split_k_from``: from that iteration on, rank 1's gemm2 is a split-K variant."""
    b = TraceBuilder("3.24.18")
    b.gpu(0, bus_location="0000:18:00.0")
    b.gpu(1, bus_location="0000:19:00.0")
    for pid, device in RANKS:
        b.process(pid, f"python train.py --rank {device}")
        t = 1_000_000 + (0 if pid == first else 300_000)
        cid = 0
        for step in range(1, STEPS + 1):
            begin = t
            for i, name in enumerate(NAMES):
                if i == 2 and device == 1 and split_k_from and step >= split_k_from:
                    name = "void gemm2_splitK(float*)"
                cid += 1
                b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 4_000, pid=pid,
                          correlation_id=cid)  # fmt: skip
                b.kernel(name, start=t + 20_000, end=t + 90_000, pid=pid, device=device,
                         correlation_id=cid, grid=(80 + i, 1, 1))  # fmt: skip
                t += 100_000
            b.nvtx_range("train_step", start=begin - 1_000, end=t, pid=pid)
    return b.write(path)


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    d = tmp_path_factory.mktemp("ranks")
    return {
        "a": _job(d / "a.sqlite"),
        "flipped": _job(d / "flipped.sqlite", first=800),
        "split_k": _job(d / "split_k.sqlite", split_k_from=4),
    }


def test_a_step_is_the_nth_iteration_of_each_rank(jobs):
    with tracelens.open(jobs["a"]) as trace:
        found = trace.steps()
    assert found.count == STEPS
    assert "in 2 processes, numbered per process" in found.detail
    # every step on both devices, each device's row the range of its own rank
    assert (
        found.frame.group_by("step").agg(pl.col("device").sort()).sort("step")["device"].to_list()
        == [[0, 1]] * STEPS
    )
    assert found.frame["kernels"].to_list() == [len(NAMES)] * (2 * STEPS)
    step_2 = found.frame.filter(pl.col("step") == 2).sort("device")
    assert step_2["cpu_start_ns"].to_list() == [1_299_000, 1_599_000]
    # two ranges per step (one per rank), what --step selects the step's work by
    assert found.ranges.height == 2 * STEPS and found.ranges["step"].n_unique() == STEPS


def test_step_selects_each_ranks_nth_iteration(jobs, capsys):
    rc, out, err = run_cli(["census", jobs["flipped"], "--step", "4", "--format", "csv"], capsys)
    assert rc == 0
    rows = pl.read_csv(out.encode())
    assert rows["instances"].sum() == 2 * len(NAMES)  # one launch of each kernel per rank
    assert "step 4 of 6" in err
    with tracelens.open(jobs["flipped"]) as trace:
        top = tracelens.stepwork.step_report(trace, top_kernels=1).top_kernels
    assert top.group_by("step").agg(pl.col("device").n_unique())["device"].to_list() == [2] * 6


def test_fingerprint_ignores_which_rank_started_first(jobs, tmp_path, capsys):
    docs = {}
    for name in ("a", "flipped"):
        with tracelens.open(jobs[name]) as trace:
            docs[name] = tracelens.fingerprint(trace)
    assert docs["a"] == docs["flipped"]
    assert docs["a"]["steps"] == {"method": "marker", "count": STEPS}
    assert [e["steps"] for e in docs["a"]["paths"]] == [list(range(1, STEPS + 1))] * 2
    baseline = tmp_path / "a.json"
    baseline.write_text(fp.dumps(docs["a"]))
    rc, out, _ = run_cli(["fingerprint", jobs["flipped"], "--check", baseline], capsys)
    assert rc == 0 and "follows a.json exactly" in out


def test_fingerprint_names_the_ranks_own_step(jobs, tmp_path, capsys):
    with tracelens.open(jobs["a"]) as trace:
        baseline = tmp_path / "a.json"
        baseline.write_text(fp.dumps(tracelens.fingerprint(trace)))
    rc, out, _ = run_cli(["fingerprint", jobs["split_k"], "--check", baseline], capsys)
    assert rc == 1
    # rank 1's 4th iteration (numbered across the ranks, it was "step 8")
    assert "step 4, device 1, launch #3 of step 4: gemm2_splitK replaced gemm2" in out
    assert "3 kernel-variant changes" in out
