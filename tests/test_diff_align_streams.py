"""Launch order across streams: the diff's alignment and the step search read each device's
launches in the order the host launched them (correlation id), not in GPU start order. Two
runs of one two-stream program whose collective starts beside another compute kernel in
each run (timing, not path) align identically and give no path clue; a kernel switched on
one stream is still found; the step search finds the period of such a program, whose GPU
start order is not periodic."""

from __future__ import annotations

import random

import pytest
from fixtures.builder import FILL, FLASH_FWD, NCCL_SENDRECV, XMMA_GEMM
from fixtures.builder import _Recorder as Recorder

import tracelens
from tracelens.compare import diff

PID = 4242
GEMM_B = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
# One step on the compute stream: (kernel name, ns per call).
COMPUTE = [(XMMA_GEMM, 40_000), (FILL, 2_000), (FLASH_FWD, 30_000), (XMMA_GEMM, 40_000)]
# Where the collective of a step starts on its own stream, from the step's first kernel:
# beside the first GEMM, the fill, the attention or the second GEMM.
PLACES = (5_000, 40_500, 50_000, 80_000)
PATH_CLUES = {"same_count_different_path", "launch_sequence_diverges", "launch_order_changed"}
STEPS = 20


def build_two_streams(tmp_path, stem, seed, compute=COMPUTE):
    """``STEPS`` steps: the compute kernels on stream 7 launched in order, then one NCCL
    collective on stream 13, launched last but starting beside a compute kernel that
    ``seed`` picks per step (its GPU start order differs between seeds)."""
    rng = random.Random(seed)
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    t = 1_000_000
    for _ in range(STEPS):
        first = t
        for name, dur in compute:
            r.kernel(name, t, dur, pid=PID, stream=7)
            t += dur + 1_000
        r.kernel(NCCL_SENDRECV, first + rng.choice(PLACES), 30_000, pid=PID, stream=13)
        t = max(t, first + PLACES[-1] + 31_000) + 50_000  # the host's gap between steps
    return r.write(tmp_path, stem).path


def _diff(a, b):
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        return diff(ta, tb)


def _gpu_order(path):
    with tracelens.open(path) as t:
        rows = t.db.execute("SELECT demangledName FROM kernels ORDER BY start").fetchall()
    return [r[0] for r in rows]


def test_cross_stream_interleaving_is_timing_not_a_path_change(tmp_path):
    a = build_two_streams(tmp_path, "a", seed=1)
    b = build_two_streams(tmp_path, "b", seed=2)
    assert _gpu_order(a) != _gpu_order(b)  # the GPU start orders differ: the case at hand
    d = _diff(a, b)
    (al,) = d.alignment
    assert al.identical and al.relation == "identical"
    assert not PATH_CLUES & {c.id for c in d.clues}


def test_a_switch_on_one_stream_is_still_found(tmp_path):
    """B launches another GEMM for the second GEMM of every step (and its collective starts
    elsewhere too): the alignment pairs them, launch for launch."""
    switched = [*COMPUTE[:3], (GEMM_B, 40_000)]
    d = _diff(
        build_two_streams(tmp_path, "a", seed=1),
        build_two_streams(tmp_path, "b", seed=2, compute=switched),
    )
    (al,) = d.alignment
    assert not al.identical
    assert al.matched_in_order == (len(COMPUTE) + 1 - 1) * STEPS
    (replaced,) = al.replaced
    assert replaced[2] == STEPS and "xmma_gemm" in replaced[0] and "segment_k_off" in replaced[1]
    # one change per step (its position counts from the step's anchor launch)
    ((_, was, now),) = al.step_changes
    assert (was, now) == replaced[:2]
    assert PATH_CLUES & {c.id for c in d.clues}


@pytest.mark.parametrize("seed", [1, 2])
def test_steps_finds_the_period_of_a_two_stream_program(tmp_path, seed):
    path = build_two_streams(tmp_path, f"s{seed}", seed=seed)
    with tracelens.open(path) as t:
        steps = t.steps()
    assert steps.method == "period"
    assert steps.count >= STEPS - 1  # the phase may leave the first or last step out
    (motif,) = steps.motif.values()
    assert len(motif) == len(COMPUTE) + 1 and motif.count(NCCL_SENDRECV) == 1
    # Each step's GPU figures hold its collective, on GPU time: busy is the union of both
    # streams' kernels, at most the step's span.
    frame = steps.frame
    assert (frame["kernels"] == len(COMPUTE) + 1).all()
    assert (frame["busy_ns"] <= frame["duration_ns"]).all()
    assert (frame["kernel_ns"] == sum(d for _, d in COMPUTE) + 30_000).all()


def test_the_report_finds_the_steps_that_steps_finds(tmp_path):
    """The report's step search reads its shared read of the work in host launch order too
    (report/timekeeping.py hands it the correlation ids): the page and `tracelens steps`
    agree on a two-stream program."""
    from tracelens.report.timekeeping import timekeeping

    path = build_two_streams(tmp_path, "r", seed=1)
    with tracelens.open(path) as t:
        expected = t.steps()
        kept = timekeeping(t, "A", [])
    assert expected.method == "period" and kept.steps is not None
    assert (kept.steps.method, kept.steps.count) == (expected.method, expected.count)
    assert kept.steps.frame.equals(expected.frame)


def test_the_fingerprint_finds_the_steps_that_steps_finds(tmp_path):
    """The fingerprint hands the step search its launches with their correlation ids, so
    its steps are those of `tracelens steps` on a two-stream program."""
    from tracelens.fingerprint import fingerprint

    path = build_two_streams(tmp_path, "f", seed=2)
    with tracelens.open(path) as t:
        expected = t.steps()
        doc = fingerprint(t)
    assert expected.method == "period"
    assert (doc["steps"]["method"], doc["steps"]["count"]) == ("period", expected.count)
