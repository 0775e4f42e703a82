"""NVTX region deltas when each step's range has its own name ('step 7', PyTorch's
'ProfilerStep#7'): the steps' ranges are one region, compared per step, and regions sort in
natural order ('layer 2' before 'layer 10'); a region in a few of the steps only is compared
by its mean per step."""

from __future__ import annotations

import pytest
from fixtures.builder import FILL, FLASH_FWD, XMMA_GEMM
from fixtures.builder import _Recorder as Recorder

import tracelens
from tracelens.compare import diff

PID = 4242
STEP = [(XMMA_GEMM, 40_000), (FLASH_FWD, 30_000), (FILL, 6_000)]


def build(
    tmp_path, stem, steps, *, attn_ns=30_000, label="ProfilerStep#{}", layers=(), every=0, fill_ns=0
):
    """One NVTX range per step named ``label`` with the step's number (``steps``: those
    numbers), an 'attn' range around the attention kernel's launch and, inside each step,
    one range per name of ``layers`` around the GEMM's; ``every``: an 'optimizer' range
    around the fill kernel's launch in every ``every``-th step only (``fill_ns``: then the
    fill's duration)."""
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    t = 1_000_000
    for number in steps:
        s0 = t - 10_000
        for name, dur in STEP:
            d = attn_ns if name == FLASH_FWD else fill_ns if name == FILL and fill_ns else dur
            if name == XMMA_GEMM and layers:
                for layer in layers:
                    r.kernel(name, t, d, pid=PID)
                    r.nvtx(layer, t - 8_000, t - 2_000, pid=PID)
                    t += d + 1_000
                continue
            r.kernel(name, t, d, pid=PID)
            if name == FLASH_FWD:
                r.nvtx("attn", t - 8_000, t - 2_000, pid=PID)
            if name == FILL and every and number % every == every - 1:
                r.nvtx("optimizer", t - 8_000, t - 2_000, pid=PID)
            t += d + 1_000
        r.nvtx(label.format(number), s0, t, pid=PID)
        t += 20_000
    return r.write(tmp_path, stem).path


def pair(a, b):
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        return diff(ta, tb)


def test_steps_named_one_by_one_are_one_region_compared_per_step(tmp_path):
    d = pair(build(tmp_path, "a", range(12)), build(tmp_path, "b", range(12), attn_ns=60_000))
    regions = {r["path"]: r for r in d.nvtx_regions.iter_rows(named=True)}
    assert set(regions) == {"ProfilerStep#*", "ProfilerStep#* / attn"}
    attn = regions["ProfilerStep#* / attn"]
    assert (attn["a_ops"], attn["b_ops"]) == (12, 12)
    assert (attn["a_step_ns"], attn["b_step_ns"], attn["delta_ns"]) == (30_000, 60_000, 30_000)
    assert attn["ratio"] == 2.0
    per_step = d.nvtx_steps.filter(d.nvtx_steps["path"] == "ProfilerStep#* / attn")
    assert per_step.height == 12 and set(per_step["delta_ns"]) == {30_000}
    assert (
        "NVTX regions: the ranges that are the steps themselves, one name per step, are one "
        "region ('ProfilerStep#*'), compared per step"
    ) in d.notes


def test_a_shifted_capture_of_numbered_steps_has_the_same_regions(tmp_path):
    """B holds steps 2-13 of the same run, A steps 0-11: every region in both, no change
    (each numbered range of one run only read as a region gone or new, delta +0)."""
    d = pair(
        build(tmp_path, "a", range(12), label="step {}"),
        build(tmp_path, "b", range(2, 14), label="step {}"),
    )
    rows = d.nvtx_regions.select("path", "a_ops", "b_ops", "delta_ns", "ratio").rows()
    assert rows == [("step *", 24, 24, 0.0, 1.0), ("step * / attn", 12, 12, 0.0, 1.0)]


def test_regions_sort_in_natural_order(tmp_path):
    """Ranges named like layers, in every step, stay apart, and tie in natural order."""
    layers = ("layer 1", "layer 2", "layer 10")
    a = build(tmp_path, "a", range(6), label="train_step", layers=layers)
    b = build(tmp_path, "b", range(6), label="train_step", layers=layers)
    d = pair(a, b)
    assert d.nvtx_regions["path"].to_list() == [
        "train_step",
        "train_step / attn",
        "train_step / layer 1",
        "train_step / layer 2",
        "train_step / layer 10",
    ]
    assert d.nvtx_steps["path"].unique(maintain_order=True).to_list()[-3:] == [
        "train_step / layer 1",
        "train_step / layer 2",
        "train_step / layer 10",
    ]
    assert not any(n.startswith("NVTX regions: the ranges") for n in d.notes)


def test_a_region_in_a_few_steps_is_compared_by_its_mean_per_step(tmp_path):
    """An optimizer range every 4th step whose work takes twice as long in B: the median
    over steps is 0 in both runs (the old figures: delta +0, the region last), its mean per
    steady step shows the change; a region in every step keeps its median."""
    a = build(tmp_path, "a", range(16), every=4, fill_ns=6_000)
    b = build(tmp_path, "b", range(16), every=4, fill_ns=12_000)
    d = pair(a, b)
    regions = {r["path"]: r for r in d.nvtx_regions.iter_rows(named=True)}
    optimizer = regions["ProfilerStep#* / optimizer"]
    assert (optimizer["a_ops"], optimizer["b_ops"]) == (4, 4)
    steady = d.sides[0].steps.steady["step"].n_unique()
    held = sum(1 for n in range(16) if n % 4 == 3 and n in set(d.sides[0].steps.steady["step"]))
    assert 0 < held < steady / 2
    assert optimizer["a_step_ns"] == pytest.approx(6_000 * held / steady)
    assert optimizer["b_step_ns"] == pytest.approx(12_000 * held / steady)
    assert optimizer["ratio"] == pytest.approx(2.0) and optimizer["delta_ns"] > 0
    assert (regions["ProfilerStep#* / attn"]["a_step_ns"], d.nvtx_regions["path"][0]) == (
        30_000,
        "ProfilerStep#*",
    )
    assert (
        "NVTX regions held in under half of the steady steps of a run are compared by their "
        "mean per steady step, not the median (which is 0 for them): "
        "'ProfilerStep#* / optimizer'"
    ) in d.notes
