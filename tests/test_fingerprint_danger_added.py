"""danger_added counts the changes that run a kernel with a determinism risk (a danger rule
at level high or medium) where A ran another kernel or none, though A's kernel there fired
the same rule: a split-K GEMM that replaced another split-K GEMM, or cascade attention's
merge that replaced a split-KV combine, sums in another order than A did there. Before, only
a rule A's kernel lacked counted, and the demo (whose whole story is such kernels) said 0."""

from __future__ import annotations

import pytest
from conftest import run_cli
from fixtures.fingerprint_runs import GEMM_SPLITK, Run, build_run

import tracelens
from tracelens import fingerprint as fp
from tracelens.demo import demo_path

OTHER_SPLITK = "nvjet_tst_64x24_64x16_4x1_v_bz_splitK_TNT"  # bs16's split-K in the demo
OTHER_NVJET = "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN"  # an info rule only


def _doc(path):
    with tracelens.open(path) as trace:
        return tracelens.fingerprint(trace)


def test_a_split_k_gemm_replacing_another_brings_its_risk(tmp_path):
    a = _doc(build_run(tmp_path / "a.sqlite", Run(gemm={(2, 1): GEMM_SPLITK})))
    b = _doc(build_run(tmp_path / "b.sqlite", Run(gemm={(2, 1): OTHER_SPLITK})))
    diff = fp.compare(a, b)
    (region,) = diff.regions
    (change,) = region.changes
    assert change.kind == "variant" and change.a.danger == change.b.danger == ("gemm_split_k",)
    assert change.danger_new == ("gemm_split_k",)
    assert diff.figures["danger_added"] == 1
    assert "1 brings a new danger rule" in fp.board.text(diff, "a", "b")


def test_an_info_rule_alone_is_no_new_danger(tmp_path):
    """cuBLAS's nvjet heuristic (level info) fires on every nvjet GEMM: one replacing another
    is a variant change, not a determinism risk brought."""
    a = _doc(build_run(tmp_path / "a.sqlite"))
    b = _doc(build_run(tmp_path / "b.sqlite", Run(gemm={(2, 1): OTHER_NVJET})))
    diff = fp.compare(a, b)
    (change,) = diff.regions[0].changes
    assert change.danger == ("cublas_heuristic_nvjet",) and change.danger_new == ()
    assert diff.figures["variant_changed"] == 1 and diff.figures["danger_added"] == 0


def test_a_launch_configuration_change_brings_none(tmp_path):
    a = _doc(build_run(tmp_path / "a.sqlite", Run(gemm={(2, 1): GEMM_SPLITK})))
    run = Run(gemm={(2, 1): GEMM_SPLITK}, gemm_grid={(2, 1): (264, 1, 1)})
    diff = fp.compare(a, _doc(build_run(tmp_path / "b.sqlite", run)))
    (change,) = diff.regions[0].changes
    assert change.kind == "config" and change.danger_new == ()
    assert diff.figures["danger_added"] == 0


@pytest.fixture(scope="module")
def demo_diff():
    return fp.compare(_doc(demo_path("bs1")), _doc(demo_path("bs16")))


def test_the_demo_counts_its_new_split_k_gemms_and_cascade_merge(demo_diff):
    brought = {
        (c.b.name.split("<")[0], c.danger_new)
        for r in demo_diff.regions
        for c in r.changes
        if c.danger_new
    }
    assert ("vllm::merge_attn_states_kernel", ("attention_merge",)) in brought
    assert ("nvjet_tst_64x24_64x16_4x1_v_bz_splitK_TNT", ("gemm_split_k",)) in brought
    # per layer and step: the merge and two split-K GEMMs (28 layers, 4 steps), the split-K
    # GEMM in every step and in the prefill outside the steps
    assert demo_diff.figures["danger_added"] == 3 * 28 * 4 + 4 + 1


def test_the_danger_added_gate_trips_on_the_demo(capsys):
    rc, _out, err = run_cli(["diff", "--demo", "--fail-if", "danger_added"], capsys)
    assert rc == 1 and "danger_added = 341" in err
