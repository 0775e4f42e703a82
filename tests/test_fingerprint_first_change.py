"""The first divergence (and first change of math) is the first changed launch in the
capture's launch order across regions, and its words say what the number counts. A
region's launches can come before and after other regions' (the demo's prefill: its own
launches before its layers and after them), so the first changed slot of the region listed
first is not the first change: the demo's "prefill, launch #4" was the capture's #340, while
the capture's #4 (layer 0's GEMM, 128x96 -> 192x192) is where `tracelens diff` puts it."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from fixtures.fingerprint_runs import GEMM_SPLITK, Run, build_run

import tracelens
from tracelens import fingerprint as fp
from tracelens.demo import demo_path
from tracelens.fingerprint.places import place


def _doc(path):
    with tracelens.open(path) as trace:
        return tracelens.fingerprint(trace)


@pytest.fixture(scope="module")
def demo_docs():
    return _doc(demo_path("bs1")), _doc(demo_path("bs16"))


def test_the_prefill_entry_says_where_its_launches_are(demo_docs):
    bs1, _bs16 = demo_docs
    (prefill,) = [e for e in bs1["paths"] if e["region"] == ["prefill"]]
    # its first two launches open the capture, the rest follow the 28 layers
    assert prefill["at"] == [0, 0, 2, 338]
    assert place(((0, 0), (2, 338)), 4) == 339
    (layer0,) = [e for e in bs1["paths"] if e["region"] == ["model.layers.0"]]
    assert layer0["steps"] == [1, 2, 3, 4] and layer0["at"] == [0, 2]  # in its step


def test_the_first_change_of_math_is_the_first_in_launch_order(demo_docs):
    diff = fp.compare(*demo_docs)
    math = diff.first_math
    assert (math.region, math.step, math.launch) == (("prefill", "model.layers.0"), None, 4)
    assert math.change.position == 2
    assert (math.change.a.name, math.change.b.name) == (
        "nvjet_tst_128x96_64x7_4x1_v_bz_bias_TNT",
        "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN",
    )
    assert (diff.first.region, diff.first.launch, diff.first.change.position) == (
        ("prefill",),
        2,
        2,
    )
    text = fp.board.text(diff, "bs1", "bs16")
    assert (
        "first change of math: prefill > model.layers.0, device 0, launch #4 of the capture "
        "(#2 of region prefill > model.layers.0): nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN "
        "replaced nvjet_tst_128x96_64x7_4x1_v_bz_bias_TNT" in text
    )
    assert json.loads(fp.board.to_json(diff, "a", "b"))["first_math"]["launch"] == 4


def test_the_diff_and_the_fingerprint_say_what_their_launch_numbers_count(capsys):
    """The path board names the capture's launch #4 (128x96 in A, 192x192 in B, in the
    prefill). `tracelens diff --demo` builds its board from the decode steps' work (the
    steps hold 19% of bs16's GPU time), so its first divergence is a launch of the steps,
    and it says so: launch #4 of step 1, not of the capture."""
    rc, out, _err = run_cli(["diff", "--demo", "-f", "markdown"], capsys)
    assert rc == 0 and "first divergence at launch #4 (step 1 of A) on device 0" in out
    rc, out, _err = run_cli(["diff", "--demo", "--fail-if", "path_changed>1"], capsys)
    assert rc == 0
    assert (
        "launch #4 of the capture (#2 of region prefill > model.layers.0): nvjet_tst_192x192" in out
    )


def test_in_a_step_the_number_counts_the_steps_launches(tmp_path):
    """Per step: a pointer kernel, then layers.0 and layers.1 (norm, GEMM, attention each).
    A change in layers.1's GEMM and a later one in the step's own last kernel: the GEMM
    is the step's launch #6, though the step's own region is listed first."""
    a = _doc(build_run(tmp_path / "a.sqlite", Run(nvtx=True)))
    b = _doc(build_run(tmp_path / "b.sqlite", Run(gemm={(2, 1): GEMM_SPLITK})))
    diff = fp.compare(a, b)
    assert (diff.first.step, diff.first.launch, diff.first.change.position) == (2, 6, 2)
    assert "launch #6 of step 2 (#2 of region layers.1)" in fp.board.text(diff, "a", "b")


def test_a_version_10_baseline_is_read_and_counts_in_its_region(tmp_path, demo_docs, capsys):
    """A version 10 document has no places: it is still read, and its first change is found
    region by region, the number said as what it counts ("launch #4 of region prefill")."""
    bs1, _ = demo_docs
    old = {
        **bs1,
        "version": 10,
        "paths": [{k: v for k, v in e.items() if k != "at"} for e in bs1["paths"]],
    }
    base = tmp_path / "v10.json"
    base.write_text(fp.dumps(old))
    rc, out, err = run_cli(["fingerprint", "--demo", "bs16", "--check", base], capsys)
    assert rc == 1 and err == ""
    assert "first change of math: prefill, device 0, launch #4 of region prefill: " in out


def test_a_bad_place_is_refused(tmp_path, demo_docs, capsys):
    bs1, _ = demo_docs
    paths = [dict(e) for e in bs1["paths"]]
    paths[0]["at"] = [0, -1]
    bad = tmp_path / "bad.json"
    bad.write_text(fp.dumps({**bs1, "paths": paths}))
    rc, _out, err = run_cli(["fingerprint", "--demo", "bs16", "--check", bad], capsys)
    assert rc == 2 and "paths[0].at[1] is -1, less than 0" in err
