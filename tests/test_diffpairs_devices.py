"""The same program on one device in A and on two in B (a data-parallel job on more ranks):
per device nothing changed. The board said "B holds 240.00× the launches of the same
sequence" (device 1: 0 → 240, "A is B cut short"), "2.00× the calls per step" for three
kernels, a danger kernel that "grew", and gpu_time_per_step_ratio 2.0 (a CI gate on it
tripped). It now says the runs use different numbers of devices and compares per step and
device."""

from __future__ import annotations

import pytest
from fixtures.builder import XMMA_GEMM
from test_diff_pairs import STEP
from test_diff_unseen_pairs import PID, pair, recorder

from tracelens.compare.gates import check_gates
from tracelens.compare.render import markdown, table


def replicas(tmp_path, stem, devices, steps=30, scale=1.0):
    """``steps`` training steps run alike on each of ``devices`` GPUs (the GEMM ``scale``×
    per call), 1 µs between kernels and 20 µs between steps."""
    r = recorder()
    for device in range(1, devices):
        r.gpu(device, "NVIDIA H100 80GB HBM3")
    for device in range(devices):
        t = 1_000_000
        for _ in range(steps):
            for name, dur in STEP:
                d = int(dur * (scale if name == XMMA_GEMM else 1.0))
                r.kernel(name, t, d, pid=PID, device=device)
                t += d + 1_000
            t += 20_000
    return r.write(tmp_path, stem).path


def test_the_same_program_on_two_devices_is_no_change_per_device(tmp_path):
    d = pair(replicas(tmp_path, "a", 1), replicas(tmp_path, "b", 2))
    assert [c.id for c in d.clues] == ["devices_differ"]
    (c,) = d.clues
    assert c.clue == "B launches kernels on 2 devices, A on 1 device"
    assert c.evidence == (
        "only in B: device 1 (240 launches); A runs its steps on 1 device, B on 2: the calls "
        "and danger lines compare per step and device"
    )
    assert "capture" not in c.verdict
    assert d.figures["gpu_time_ratio"] == pytest.approx(2.0)  # the totals: both devices
    assert d.figures["gpu_time_per_step_ratio"] == pytest.approx(1.0)
    gate = "gpu_time_per_step_ratio>1.05"
    assert [g.tripped for g in check_gates(d, [gate])] == [False]
    assert set(d.danger["status"]) == {"same"}
    assert d.danger["b_calls_per_step"].to_list() == [2.0]
    heading = (
        "Danger-zone kernels (per step and device: 30 steps on 1 device in A, 30 on 2 devices "
        "in B; each change is judged per step)"
    )
    assert heading in table(d, width=400) and heading in markdown(d)


def test_a_slower_gemm_on_two_devices_is_its_per_device_cost(tmp_path):
    """B's GEMM is 1.3× per call on both of its devices: the per-call clue's impact is per
    step and device (+24 µs, as the GPU wall time line), not both devices' sum (+48 µs)."""
    d = pair(replicas(tmp_path, "a", 1), replicas(tmp_path, "b", 2, scale=1.3))
    ids = [c.id for c in d.clues]
    assert "calls_per_step" not in ids and "capture_difference" not in ids
    (outlier,) = [c for c in d.clues if c.id == "per_call_outlier"]
    assert outlier.impact_ns == pytest.approx(24_000)
    (lead,) = [c for c in d.clues if c.id == "time_accounting"]
    assert lead.impact_ns == pytest.approx(24_000)


def test_two_devices_in_both_runs_keep_their_per_step_figures(tmp_path):
    """Runs on as many devices are compared as before: per step, both devices' calls."""
    d = pair(replicas(tmp_path, "a", 2), replicas(tmp_path, "b", 2, steps=60))
    assert [c.id for c in d.clues] == ["capture_difference"]
    assert d.replicas == (1, 1)
    assert d.danger["a_calls_per_step"].to_list() == [4.0]


def test_fewer_devices_in_b_reads_as_such(tmp_path):
    d = pair(replicas(tmp_path, "a", 2), replicas(tmp_path, "b", 1))
    assert [c.clue for c in d.clues] == ["B launches kernels on 1 device, A on 2 devices"]
    assert d.figures["gpu_time_per_step_ratio"] == pytest.approx(1.0)


def test_pipeline_stages_on_two_devices_are_no_replicas(tmp_path):
    """A splits the step over two devices (the first four kernels on device 0, the rest
    on device 1: pipeline stages), B runs it whole on one: every kernel runs as often per
    step, so no calls clue, and the per-step figures are not halved for A's two devices;
    nor is device 0's launch order (half of B's) another path."""
    r = recorder()
    r.gpu(1, "NVIDIA H100 80GB HBM3")
    t = 1_000_000
    for _ in range(30):
        for i, (name, dur) in enumerate(STEP):
            r.kernel(name, t, dur, pid=PID, device=0 if i < 4 else 1)
            t += dur + 1_000
        t += 20_000
    d = pair(r.write(tmp_path, "a").path, replicas(tmp_path, "b", 1))
    assert d.replicas == (1, 1)
    assert "calls_per_step" not in [c.id for c in d.clues]
    (c,) = [c for c in d.clues if c.id == "devices_differ"]
    assert c.evidence == "only in A: device 1 (120 launches)"
    # device 0 runs 4 of the 8 kernels in A, all 8 in B: no "same launch count, different
    # kernels: a library chose another algorithm" (it said so, +12.50 µs/step)
    assert c.verdict.startswith("the same launches, every kernel as often, placed on other")
    assert not {"same_count_different_path", "launch_sequence_diverges"} & {c.id for c in d.clues}
