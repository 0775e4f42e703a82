"""`fingerprint --check` of one program captured over another span (cut after fewer steps,
cut mid-step, started later): what only one capture reached is stated, not a path change,
because the document says which launches outside the steps are before the first step and
after the last (format version 10); a change inside what both captured still fails."""

from __future__ import annotations

import pytest
from conftest import REPO, run_cli
from fixtures.fingerprint_runs import GEMM, GEMM_SPLITK, Run, build_run

import tracelens
from tracelens import fingerprint as fp
from tracelens.fingerprint.ends import CaptureEnds

STEPS = 8
STEP = 7  # launches in a step of the fixture's program (one more every 4th: the optimizer)
# What the board adds when every step is the same program: the documents hold no times.
NOT_KNOWN = (
    "; which capture started later is not known: every step is the same program, and a "
    "capture that started a step later reads as one that ended a step earlier (the "
    "documents hold no times)"
)


def _doc(path):
    with tracelens.open(path, cache=False) as trace:
        return tracelens.fingerprint(trace)


def _check_both_ways(tmp_path, capsys, full: Run, cut: Run) -> tuple[str, str]:
    """`fingerprint CUT --check FULL.json` and `fingerprint FULL --check CUT.json`: both
    pass; their boards."""
    outs = []
    paths = {
        name: build_run(tmp_path / f"{name}.sqlite", run)
        for name, run in (("full", full), ("cut", cut))
    }
    for new, old in (("cut", "full"), ("full", "cut")):
        baseline = tmp_path / f"{old}.json"
        baseline.write_text(fp.dumps(_doc(paths[old])))
        rc, out, err = run_cli(["fingerprint", paths[new], "--check", baseline], capsys)
        assert rc == 0 and err == "", out
        assert out.startswith(
            f"numerical path: {new}.sqlite follows {old}.json over the launches both captures hold"
        ), out
        outs.append(out)
    return outs[0], outs[1]


@pytest.mark.parametrize("nvtx", [True, False])
def test_a_capture_cut_after_fewer_steps_is_not_a_removal(tmp_path, capsys, nvtx):
    """(a) The optimizer runs every 4th step; the capture ends after step 3, before any:
    with NVTX its region is held by the full capture only, and the old code reported its
    2 launches removed (added the other way round)."""
    full = Run(steps=STEPS, optimizer_every=4, nvtx=nvtx)
    cut = Run(steps=3, optimizer_every=4, nvtx=nvtx)
    new, old = _check_both_ways(tmp_path, capsys, full, cut)
    # the optimizer's steps fix where the short capture's 3 steps are: no "not known"
    assert (
        ". B's capture ends earlier (it holds 3 steps, A 8): A's last 37 launches are past "
        "its end, not compared\n"
    ) in new
    assert (
        ". A's capture ends earlier (it holds 3 steps, B 8): B's last 37 launches are past "
        "its end, not compared\n"
    ) in old


@pytest.mark.parametrize("nvtx", [True, False])
def test_a_capture_cut_mid_step_is_not_a_removal(tmp_path, capsys, nvtx):
    """(b) The capture ends two launches into step 4 (its ranges never end): those are
    after the last step, and the document says so; the old code reported the optimizer
    region removed (NVTX)."""
    cut = Run(steps=STEPS, optimizer_every=4, nvtx=nvtx, launches=3 * STEP + 2)
    doc = _doc(build_run(tmp_path / "doc.sqlite", cut))
    outside = [e for e in doc["paths"] if not e["steps"]]
    assert outside and all(e.get("after") == e["launches"] for e in outside)
    assert sum(e["after"] for e in outside) == 2 and doc["steps"]["count"] == 3
    new, _old = _check_both_ways(
        tmp_path, capsys, Run(steps=STEPS, optimizer_every=4, nvtx=nvtx), cut
    )
    assert (
        ". B's capture ends earlier (it holds 3 steps, A 8): A's last 35 launches are past "
        "its end, not compared\n"
    ) in new


@pytest.mark.parametrize("nvtx", [True, False])
def test_a_capture_started_later_is_not_a_launch_order_change(tmp_path, capsys, nvtx):
    """(c) Started 3 launches into step 1 and as long: it ends 3 launches into step 9, the
    same kernels as often, one step's order rotated. The old code reported a launch-order
    change (no NVTX: one region) or the launches before the first step added (NVTX)."""
    later = Run(steps=STEPS + 1, skip=3, launches=STEPS * STEP, nvtx=nvtx)
    doc = _doc(build_run(tmp_path / "doc.sqlite", later))
    assert sum(e.get("before", 0) for e in doc["paths"]) == STEP - 3
    assert sum(e.get("after", 0) for e in doc["paths"]) == 3
    new, old = _check_both_ways(tmp_path, capsys, Run(steps=STEPS, nvtx=nvtx), later)
    for out in (new, old):
        assert "launch orders changed" not in out
    # every step is the same program: a start 3 launches later reads as one 4 launches
    # earlier, and the board says that which capture started later is not known (with
    # NVTX each region's launches are placed apart: one at each end)
    n = 1 if nvtx else 3
    first, second = ("A", "B") if nvtx else ("B", "A")
    steps = f"it holds {8 if nvtx else 7} steps, {second} {7 if nvtx else 8}"
    first_launches = "first launch is" if nvtx else f"first {n} launches are"
    last_launches = "last launch is" if nvtx else f"last {n} launches are"
    assert (
        f". {first}'s capture starts later ({steps}): {second}'s {first_launches} before its "
        f"start, not compared; {second}'s capture ends earlier: {first}'s {last_launches} "
        f"past its end, not compared{NOT_KNOWN}\n"
    ) in new


def test_a_capture_started_whole_steps_later_says_so(tmp_path, capsys):
    """(c) Without NVTX, steps 5-8 only: their first slice in the full capture (steps 1-4,
    which hold the optimizer too) is not where its steps begin and end; steps 5-8 are, so
    the first 29 launches are before its start (the old code put the cut at the end and
    compared the optimizer's launch as removed)."""
    full = Run(steps=STEPS, optimizer_every=4, nvtx=False)
    later = Run(steps=4, first_step=5, optimizer_every=4, nvtx=False)
    new, _old = _check_both_ways(tmp_path, capsys, full, later)
    assert (
        ". B's capture starts later (it holds 4 steps, A 8): A's first 29 launches are before "
        "its start, not compared\n"
    ) in new


@pytest.mark.parametrize("nvtx", [True, False])
def test_a_switch_inside_the_steps_both_hold_still_fails(tmp_path, capsys, nvtx):
    """Cut mid-step and with another GEMM in layer 1 of every step: exit 1, the switch
    named, the cut stated apart."""
    full = build_run(tmp_path / "full.sqlite", Run(steps=STEPS, nvtx=nvtx))
    switch = {(step, 1): GEMM_SPLITK for step in range(1, STEPS + 1)}
    cut = Run(steps=STEPS, launches=4 * STEP + 3, gemm=switch, nvtx=nvtx)
    baseline = tmp_path / "full.json"
    baseline.write_text(fp.dumps(_doc(full)))
    rc, out, _ = run_cli(
        ["fingerprint", build_run(tmp_path / "cut.sqlite", cut), "--check", baseline], capsys
    )
    assert rc == 1 and f"{GEMM_SPLITK} replaced {GEMM}" in out
    assert "0 launches added, 0 removed" in out
    assert (
        ". B's capture ends earlier (it holds 4 steps, A 8): A's last 25 launches are past "
        f"its end, not compared{NOT_KNOWN}\n"
    ) in out


def test_a_kernel_missing_from_a_step_both_hold_whole_is_removed(tmp_path, capsys):
    """The last step's ranges ended (a whole step) without its last kernel: not a capture
    cut there, a removal (the old code took the capture for cut and passed)."""
    full = build_run(tmp_path / "full.sqlite", Run(steps=STEPS))
    short = Run(steps=5, launches=5 * STEP - 1, open_end=False)
    baseline = tmp_path / "full.json"
    baseline.write_text(fp.dumps(_doc(full)))
    rc, out, _ = run_cli(
        ["fingerprint", build_run(tmp_path / "short.sqlite", short), "--check", baseline], capsys
    )
    assert rc == 1 and "0 launches added, 1 removed" in out, out
    assert "removed  #15   flash::flash_fwd_splitkv_kernel" in out
    assert (
        ". B's capture ends earlier (it holds 5 steps, A 8): A's last 21 launches are past "
        f"its end, not compared{NOT_KNOWN}\n"
    ) in out


def test_the_ends_are_data_of_the_comparison(tmp_path):
    """Which capture starts later or ends earlier, and by how many steps and launches, are
    fields of the comparison (``PathDiff.ends``, ``capture_ends`` in the JSON), and the
    sentence is said from them."""
    from tracelens.fingerprint.board import capture_text

    full = _doc(build_run(tmp_path / "full.sqlite", Run(steps=STEPS, optimizer_every=4)))
    short = _doc(build_run(tmp_path / "short.sqlite", Run(steps=3, optimizer_every=4)))
    diff = fp.compare(full, short)
    assert diff.ends == CaptureEnds(STEPS, 3, "marker", "marker", past_end_a=37)
    assert (diff.ends.ends_earlier, diff.ends.starts_later, diff.ends.more_steps) == ("B", None, -5)
    assert diff.ends.only_in("A") == 37 and diff.ends.only_in("B") == 0
    assert (
        diff.capture
        == capture_text(diff.ends)
        == (
            "B's capture ends earlier (it holds 3 steps, A 8): A's last 37 launches are past its "
            "end, not compared"
        )
    )
    assert diff.to_dict()["capture_ends"] == {
        "steps_a": 8,
        "steps_b": 3,
        "method_a": "marker",
        "method_b": "marker",
        "before_start_a": 0,
        "past_end_a": 37,
        "before_start_b": 0,
        "past_end_b": 0,
        "ambiguous": False,
    }
    later = _doc(build_run(tmp_path / "later.sqlite", Run(steps=4, first_step=5, nvtx=False)))
    plain = _doc(build_run(tmp_path / "plain.sqlite", Run(steps=STEPS, nvtx=False)))
    assert (
        fp.compare(full, full).ends is None
        and "capture_ends" not in fp.compare(plain, plain).to_dict()
    )
    assert fp.compare(plain, later).ends.ambiguous


def test_a_capture_started_later_over_the_same_steps_is_said_to_be_unknown(tmp_path):
    """Steps 3-6 of 6, every step the same program: the documents hold no times, so this
    reads as a capture that ended two steps earlier, and the board says which started
    later is not known (the old sentence claimed "a shorter capture", the last 14
    launches); the README says the same."""
    full = _doc(build_run(tmp_path / "full.sqlite", Run(steps=6)))
    later = _doc(build_run(tmp_path / "later.sqlite", Run(steps=4, first_step=3)))
    diff = fp.compare(full, later)
    assert diff.identical and diff.ends.ambiguous and diff.ends.past_end_a == 2 * STEP
    assert diff.capture == (
        "B's capture ends earlier (it holds 4 steps, A 6): A's last 14 launches are past its "
        f"end, not compared{NOT_KNOWN}"
    )
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert NOT_KNOWN.removeprefix("; ") in readme
