"""Steps that hold only part of a capture's work (the demo: a prefill, then four NVTX
decode steps; bs16's steps hold 19% of its GPU time). The board's per-step clues count the
steps' own work, and the work outside them is one clue, once per capture: the board led
with 'GPU wall time per step: 8.36 ms → 31.41 ms (+23.05 ms)' and 'gemm: variants swapped
+21.97 ms/step', the prefill's 101 ms GEMM divided over five 'repetitions' (one of them the
prefill), while `tracelens steps` gave medians of 7.18 and 8.53 ms."""

from __future__ import annotations

import pytest
from conftest import run_cli

import tracelens
from tracelens.compare import diff
from tracelens.compare.render import impact_text
from tracelens.demo import demo_path


@pytest.fixture(scope="module")
def demo():
    return diff(demo_path("bs1"), demo_path("bs16"))


def _clue(d, clue_id):
    return next(c for c in d.clues if c.id == clue_id)


def test_the_headline_is_per_decode_step(demo):
    lead = demo.clues[0]
    assert lead.id == "time_accounting"
    assert lead.clue == "GPU wall time per step: 7.42 ms → 8.74 ms (+1.32 ms)"
    # Within 10% of what `tracelens steps` says of each run's steps (7.18 and 8.53 ms)
    f = demo.figures
    assert lead.impact_ns / 1e6 == pytest.approx(f["step_median_ms"] - f["step_median_ms_a"], 0.1)
    assert demo.figures["gpu_time_per_step_ratio"] == pytest.approx(1.186, abs=0.01)
    assert (demo.steps_a, demo.steps_b) == (4, 4)


def test_the_prefill_is_its_own_clue_once_per_capture(demo):
    outside = _clue(demo, "outside_steps")
    assert demo.clues.index(outside) == 1  # right after the lead line
    assert outside.clue == (
        "outside the steps (NVTX prefill): 11.03 ms → 120.7 ms (+109.7 ms), once per capture"
    )
    assert "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_bias_TNN (only in B, +101.3 ms)" in (
        outside.evidence
    )
    assert impact_text(demo, outside.impact_ns, outside.id) == "+109.7 ms once"
    assert demo.figures["outside_steps_ms"] == pytest.approx(120.70, abs=0.01)
    assert demo.figures["outside_steps_ms_a"] == pytest.approx(11.03, abs=0.01)
    # The prefill's GEMM is no per-step variant: the variants line counts the steps' GEMMs
    assert _clue(demo, "variant_swap").impact_ns < 1e6
    # and the tables stay those of the whole captures (the prefill's GEMM in them)
    prefill = demo.kernels.filter(demo.kernels["name"].str.starts_with("nvjet_sm90_tst_128x256"))
    assert prefill["b_total_ns"].sum() > 100e6


def test_the_demo_story_is_still_told(demo):
    """Cascade attention's merge kernel and the new split-K GEMMs in bs16
    (shared/kernel_names/KERNEL_NAMES.md)."""
    risky = [c for c in demo.clues if c.id.startswith("danger_")]
    assert any("gemm_split_k" in c.clue for c in risky)
    merge = [c for c in risky if "attention_merge" in c.clue]
    assert merge and "only in B: vllm::merge_attn_states_kernel" in merge[0].evidence
    assert "per-step clues count the steps' own work" in demo.notes[0]


def test_a_narrowed_diff_compares_what_it_selected(capsys):
    """--nvtx 'decode_step_*' selects the steps already: no clue outside them."""
    rc, out, _ = run_cli(["diff", "--demo", "--nvtx", "decode_step_*", "-f", "json"], capsys)
    assert rc == 0 and '"outside_steps"' not in out
    assert "GPU wall time per step: 7.42 ms \\u2192 8.74 ms" in out


def test_steps_that_hold_the_whole_capture_are_unchanged(tmp_path):
    """A file compared with itself whose steps hold most of its time: no second read, no
    outside clue, and the outside figures not measured."""
    from tracelens.compare.gates import check_gates
    from tracelens.errors import UsageError

    with tracelens.open(demo_path("bs1")) as t:
        d = diff(t, t)
    assert not d.clues and d.steps_a == 4  # bs1's steps hold 69% of its time
    with pytest.raises(UsageError, match="outside_steps_ms was not measured"):
        check_gates(d, ["outside_steps_ms>1"])
