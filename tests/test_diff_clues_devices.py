"""One GPU of several changing unlike the others: the census adds every device up, so one
device three times slower beside an unchanged one reads as every kernel twice as slow; the
board names the device instead, and keeps the uniform clue for changes every device made."""

from __future__ import annotations

from fixtures.builder import FILL, FLASH_FWD, XMMA_GEMM
from fixtures.builder import _Recorder as Recorder

import tracelens
from tracelens.compare import diff

PID = 4242
STEP = [(XMMA_GEMM, 40_000), (FLASH_FWD, 30_000), (FILL, 6_000)]


def build(tmp_path, stem, scale_of_device, steps=20):
    """The same step on each device of ``scale_of_device`` (ordinal -> per-call factor),
    ``steps`` times, the devices side by side in time."""
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    for device in sorted(scale_of_device):
        r.gpu(device, "NVIDIA H100 80GB HBM3")
    for device, scale in sorted(scale_of_device.items()):
        t = 1_000_000
        for _ in range(steps):
            for name, dur in STEP:
                d = int(dur * scale)
                r.kernel(name, t, d, pid=PID, device=device)
                t += d + 1_000
            t += 20_000
    return r.write(tmp_path, stem).path


def pair(a, b):
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        return diff(ta, tb)


def test_one_slow_device_is_named_not_a_uniform_slowdown(tmp_path):
    d = pair(build(tmp_path, "a", {0: 1.0, 1: 1.0}), build(tmp_path, "b", {0: 1.0, 1: 3.0}))
    ids = [c.id for c in d.clues]
    assert "uniform_change" not in ids
    (c,) = [c for c in d.clues if c.id == "device_change"]
    assert c.clue == "device 1: the typical kernel is 3.00× longer per call (device 0: 1.00×)"
    assert c.rows == ("1",) and c.anchor == "alignment"
    assert "one GPU got slower" in c.verdict
    assert "device 0 1.00×" in c.evidence
    # the impact is device 1's extra time per step: 2 × (40 + 30 + 6) µs
    assert c.impact_ns == 152_000


def test_one_fast_device_of_four_is_named_with_the_others_range(tmp_path):
    d = pair(
        build(tmp_path, "a", dict.fromkeys(range(4), 1.0)),
        build(tmp_path, "b", {0: 1.0, 1: 1.0, 2: 0.5, 3: 1.0}),
    )
    (c,) = [c for c in d.clues if c.id == "device_change"]
    assert c.clue == (
        "device 2: the typical kernel is 2.00× shorter per call (the 3 other devices: 1.00–1.00×)"
    )
    assert "one GPU got faster" in c.verdict


def test_every_device_slower_alike_is_uniform_and_no_device_is_named(tmp_path):
    d = pair(build(tmp_path, "a", {0: 1.0, 1: 1.0}), build(tmp_path, "b", {0: 2.0, 1: 2.0}))
    ids = [c.id for c in d.clues]
    assert "uniform_change" in ids and "device_change" not in ids


def test_a_single_device_has_no_device_clue(tmp_path):
    d = pair(build(tmp_path, "a", {0: 1.0}), build(tmp_path, "b", {0: 3.0}))
    ids = [c.id for c in d.clues]
    assert "uniform_change" in ids and "device_change" not in ids
    assert d.sides[0].work is None  # the work kept for the per-device figures is let go


def build_two_streams(tmp_path, stem, scale_1, *, fill_first):
    """Devices 0 and 1, each step: the host launches FILL (stream 8), then the GEMM
    (stream 7); on the GPU the GEMM runs first, unless ``fill_first``. Device 1's kernels
    take ``scale_1`` times as long."""
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    for device in (0, 1):
        r.gpu(device, "NVIDIA H100 80GB HBM3")
    for device, scale in ((0, 1.0), (1, scale_1)):
        gemm, fill = int(40_000 * scale), int(6_000 * scale)
        t = 1_000_000
        for _ in range(20):
            fill_at, gemm_at = (t, t + fill + 1_000) if fill_first else (t + gemm + 1_000, t)
            r.kernel(FILL, fill_at, fill, pid=PID, device=device, stream=8)
            r.kernel(XMMA_GEMM, gemm_at, gemm, pid=PID, device=device, stream=7)
            t += gemm + fill + 22_000
    return r.write(tmp_path, stem).path


def test_per_device_figures_follow_names_not_the_order_of_launches(tmp_path):
    """B's device 1 runs its two streams in another GPU order (and 3x slower): each
    kernel's per-call change on it is 3.00x, whatever order the launches read in."""
    a = build_two_streams(tmp_path, "a", 1.0, fill_first=False)
    b = build_two_streams(tmp_path, "b", 3.0, fill_first=True)
    (c,) = [c for c in pair(a, b).clues if c.id == "device_change"]
    assert c.clue == "device 1: the typical kernel is 3.00× longer per call (device 0: 1.00×)"
    assert "(middle half 3.00–3.00×)" in c.evidence


def test_a_file_compared_with_itself_reads_no_per_device_figures(tmp_path, monkeypatch):
    """One read compared with itself: every device pair changed alike, so the work is not
    kept for per-device figures (its memory: a few columns per launch)."""
    from tracelens.compare import model

    calls = []
    real = model.device_kernels
    monkeypatch.setattr(model, "device_kernels", lambda *a: calls.append(a) or real(*a))
    a = build(tmp_path, "a", {0: 1.0, 1: 1.0})
    d = pair(a, a)
    assert calls == [] and "device_change" not in [c.id for c in d.clues]
    pair(a, build(tmp_path, "b", {0: 1.0, 1: 3.0}))
    assert len(calls) == 2
