"""The path board on runs that place the same work on other devices.

A data-parallel replica (B runs A's step on device 0 and, alike, on device 1) tripped
``--fail-if danger_added``: "60 bring a new danger rule" for device 1's launches of the
GEMM A's device 0 already runs, and "240 kernels added" counted launches. Pipeline stages
(A: the step's first four kernels on device 0, the rest on device 1) against the whole step
on one device read "120 kernels added, 120 removed" and tripped ``path_changed``: the same
kernels, as often, with the same launch configurations, only on another GPU."""

from __future__ import annotations

import json

from conftest import run_cli
from fixtures.builder import XMMA_GEMM
from fixtures.fingerprint_runs import GEMM_SPLITK
from test_diff_pairs import STEP
from test_diff_unseen_pairs import PID, recorder
from test_diffpairs_devices import replicas

import tracelens
from tracelens import fingerprint as fp

H100 = "NVIDIA H100 80GB HBM3"


def _placed(tmp_path, stem, device_of, steps=30, gemm=XMMA_GEMM):
    """``steps`` training steps, kernel i of the step on device ``device_of(i)`` (the
    GEMMs named ``gemm``)."""
    r = recorder()
    for device in {device_of(i) for i in range(len(STEP))} - {0}:
        r.gpu(device, H100)
    t = 1_000_000
    for _ in range(steps):
        for i, (name, dur) in enumerate(STEP):
            r.kernel(gemm if name == XMMA_GEMM else name, t, dur, pid=PID, device=device_of(i))
            t += dur + 1_000
        t += 20_000
    return r.write(tmp_path, stem).path


def test_a_replica_on_a_second_device_brings_no_new_danger(tmp_path, capsys):
    a, b = replicas(tmp_path, "a", 1), replicas(tmp_path, "b", 2)
    diff = fp.compare(fp(a), fp(b))
    f = diff.figures
    # device 1 runs the GEMM A's device 0 runs in the same region and step: no new math
    assert f["danger_added"] == 0
    assert f["launches_added"] == f["kernels_added"] == 240 and f["launches_removed"] == 0
    assert f["path_changed"] == 1  # a region A does not hold is still said
    text = fp.board.text(diff, "a", "b")
    assert "240 launches added, 0 removed; 0 bring a new danger rule" in text
    assert "kernels added" not in text
    # the region only B holds is named a replica of A's device 0 (JSON: same_as)
    assert (
        "device 1, (the whole step), steps 1-30 (only in B: the same launches as device 0 in A)"
        in text
    )
    assert [(r.device, r.status, r.same_as) for r in diff.regions] == [(1, "added", 0)]
    back = fp.compare(fp(b), fp(a))
    assert back.regions[0].same_as == 0 and back.figures["launches_removed"] == 240
    rc, out, err = run_cli(["diff", a, b, "--fail-if", "danger_added", "--no-cache"], capsys)
    assert rc == 0, err
    rc, out, _err = run_cli(["diff", a, b, "--fail-if", "danger_added", "-f", "json"], capsys)
    doc = json.loads(out)
    assert doc["figures"]["launches_added"] == 240 and doc["regions"][0]["same_as"] == 0


def test_a_second_device_running_math_a_did_not_brings_its_danger(tmp_path):
    """Device 1 only in B runs a split-K GEMM A runs nowhere: two per step are new."""
    a = _placed(tmp_path, "a", lambda i: 0)
    r = recorder()
    r.gpu(1, H100)
    for device, gemm in ((0, XMMA_GEMM), (1, GEMM_SPLITK)):
        t = 1_000_000
        for _ in range(30):
            for name, dur in STEP:
                r.kernel(gemm if name == XMMA_GEMM else name, t, dur, pid=PID, device=device)
                t += dur + 1_000
            t += 20_000
    b = r.write(tmp_path, "b").path
    diff = fp.compare(fp(a), fp(b))
    assert diff.figures["danger_added"] == 2 * 30
    (region,) = diff.regions
    assert {c.danger_new for c in region.changes if c.danger_new} == {("gemm_split_k",)}
    assert region.same_as is None  # not A's launches: no replica said
    assert "same_as" not in diff.to_dict()["regions"][0]


def test_pipeline_stages_against_one_device_are_the_same_launches_elsewhere(tmp_path, capsys):
    a = _placed(tmp_path, "a", lambda i: 0 if i < 4 else 1)
    b = _placed(tmp_path, "b", lambda i: 0)
    diff = fp.compare(fp(a), fp(b))
    f = diff.figures
    assert f["path_changed"] == 0 and diff.identical and diff.first is None
    assert f["launches_added"] == f["launches_removed"] == 0
    assert f["launches_moved"] == 4 * 30
    assert {(r.device, r.status) for r in diff.moved} == {(0, "changed"), (1, "removed")}
    text = fp.board.text(diff, "a", "b")
    assert text.startswith("numerical path: b runs the launches of a, placed on other devices")
    assert "devices: A launches on devices 0 and 1, B on device 0: 120 launches run on" in text
    assert "added" not in text and "removed" not in text
    rc, out, err = run_cli(["diff", a, b, "--fail-if", "path_changed", "--no-cache"], capsys)
    assert rc == 0, err
    rc, out, err = run_cli(["diff", a, b, "--fail-if", "launches_moved", "-f", "json"], capsys)
    assert rc == 1 and "launches_moved = 120" in err
    doc = json.loads(out)
    assert doc["devices"] == "A launches on devices 0 and 1, B on device 0"
    assert len(doc["moved"]) == 2


def test_stages_swapped_between_devices_are_moved_too(tmp_path):
    a = _placed(tmp_path, "a", lambda i: 0 if i < 4 else 1)
    b = _placed(tmp_path, "b", lambda i: 1 if i < 4 else 0)
    diff = fp.compare(fp(a), fp(b))
    assert diff.figures["path_changed"] == 0 and diff.figures["launches_moved"] == 8 * 30


def test_moved_launches_with_another_kernel_are_a_path_change(tmp_path):
    """B runs the whole step on one device and another GEMM: not the same launches, so
    every difference is counted as before (nothing set apart as moved)."""
    a = _placed(tmp_path, "a", lambda i: 0 if i < 4 else 1)
    b = _placed(tmp_path, "b", lambda i: 0, gemm=GEMM_SPLITK)
    diff = fp.compare(fp(a), fp(b))
    f = diff.figures
    assert f["path_changed"] == 1 and not diff.moved and f["launches_moved"] == 0
    assert f["launches_added"] == 4 * 30 and f["launches_removed"] == 4 * 30
    assert f["variant_changed"] == 2 * 30


def test_a_reordered_step_on_one_device_is_no_move(tmp_path):
    """Each device runs what it ran, in another order: a launch-order change, not moved."""
    order = [1, 0, 2, 3, 4, 5, 6, 7]
    r = recorder()
    t = 1_000_000
    for _ in range(30):
        for i in order:
            name, dur = STEP[i]
            r.kernel(name, t, dur, pid=PID, device=0)
            t += dur + 1_000
        t += 20_000
    diff = fp.compare(fp(_placed(tmp_path, "a", lambda i: 0)), fp(r.write(tmp_path, "b").path))
    assert diff.figures["path_changed"] == 1 and not diff.moved
    assert tracelens.fingerprint is fp
