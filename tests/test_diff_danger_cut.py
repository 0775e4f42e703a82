"""The diff's danger-zone table and clue compare each kernel per step (per launch where the
captures have no steps): a capture that holds more steps of the same program runs every
danger kernel longer in total without any of them growing, while a danger kernel that
runs more often per step still grew."""

from __future__ import annotations

import polars as pl
import pytest
from fixtures.builder import XMMA_GEMM
from test_diff_pairs import STEP, build_steps, pair

from tracelens.compare.model import danger_table, work_ratio


def _danger(d) -> dict[str, str]:
    return dict(zip(d.danger["name"], d.danger["status"], strict=True))


def _danger_clues(d) -> list[str]:
    return [c.id for c in d.clues if c.id.startswith("danger_")]


@pytest.mark.parametrize("steps_a, steps_b", [(20, 30), (30, 20)])
def test_a_longer_capture_of_the_same_steps_is_no_danger_change(tmp_path, steps_a, steps_b):
    a = build_steps(tmp_path, "a", steps_a)
    b = build_steps(tmp_path, "b", steps_b)
    d = pair(tmp_path, a, b)
    assert (d.steps_a, d.steps_b) == (steps_a, steps_b)
    assert _danger(d) == {XMMA_GEMM: "same"}  # the old code: grew (20 -> 30), shrank
    assert _danger_clues(d) == []


def test_a_danger_kernel_called_more_per_step_in_a_longer_capture_grew(tmp_path):
    """A: 20 steps, 2 GEMMs each; B: 30 steps, 3 GEMMs each (1.5x per step): the danger
    line says it grew, the calls-per-step line counts its time."""
    more = [*STEP, (XMMA_GEMM, 40_000)]
    a = build_steps(tmp_path, "a", 20)
    b = build_steps(tmp_path, "b", 30, step=more)
    d = pair(tmp_path, a, b)
    assert _danger(d) == {XMMA_GEMM: "grew"}
    (clue,) = [c for c in d.clues if c.id == "danger_grew"]
    assert "cublas_heuristic_legacy" in clue.clue and clue.rows == (XMMA_GEMM,)
    # one more 40 us GEMM per step: the calls-per-step line's time, which the danger line
    # no longer counts a second time (it says whose time it is)
    (calls,) = [c for c in d.clues if c.id == "calls_per_step"]
    assert calls.rows == (XMMA_GEMM,) and calls.impact_ns == pytest.approx(40_000)
    assert clue.impact_ns is None and "per-call (or calls-per-step) line's" in clue.evidence
    # and the other way: fewer calls per step in the longer capture
    d = pair(tmp_path, build_steps(tmp_path, "c", 20, step=more), build_steps(tmp_path, "d", 30))
    assert _danger(d) == {XMMA_GEMM: "shrank"} and _danger_clues(d) == []


def test_work_ratio_is_per_step_else_per_launch():
    assert work_ratio((20, 30), (250, 360)) == 1.5
    assert work_ratio((None, 30), (250, 500)) == 2.0  # no steps in A: per launch
    assert work_ratio((20, None), (0, 500)) == 1.0  # nothing to scale by
    assert work_ratio((None, None), (0, 0)) == 1.0


def test_danger_table_compares_totals_against_the_work_each_capture_holds():
    kernels = pl.DataFrame(
        {
            "name": [XMMA_GEMM],
            "status": ["both"],
            "a_instances": [100],
            "b_instances": [150],
            "a_total_ns": [4_000_000],
            "b_total_ns": [6_000_000],
        }
    )

    def status(**kw) -> str:
        (s,) = danger_table(kernels, 1.2, **kw)["status"]
        return s

    assert status() == "grew"  # the same work: 1.5x the time
    assert status(work=1.5) == "same"  # 1.5x the steps
    assert status(work=1.5, typical=0.8) == "grew"  # each call faster, the total not
    assert status(work=2.0) == "shrank"  # less per step


def test_the_danger_table_shows_what_it_judged_per_step(tmp_path):
    """20 vs 30 steps of the same program: the GEMM is 'same' per step, and the table
    showed its totals beside that status (40 -> 60 calls, 1.60 -> 2.40 ms). Now its
    columns are per step when the step counts differ, in text, Markdown and JSON (added
    fields: the totals stay)."""
    import json

    from tracelens.compare import render

    d = pair(tmp_path, build_steps(tmp_path, "a", 20), build_steps(tmp_path, "b", 30))
    title = "Danger-zone kernels (per step: 20 steps in A, 30 in B; each change is judged per step)"
    text = render.table(d, width=160).splitlines()
    at = text.index(title)
    assert text[at + 2].split() == [
        *("Risk", "Change", "Kernel", "Rule"),
        *("Calls/step", "A", "Calls/step", "B", "Time/step", "A", "Time/step", "B", "Fix"),
    ]
    assert text[at + 4].split()[:2] + text[at + 4].split()[4:10] == [
        *("medium", "same", "2.00", "2.00", "80.00", "µs", "80.00", "µs"),
    ]
    md = render.markdown(d).splitlines()
    at = md.index(f"### {title}")
    assert md[at + 2] == (
        "| Risk | Change | Kernel | Rule | Calls/step A | Calls/step B | Time/step A "
        "| Time/step B | Fix |"
    )
    assert md[at + 4].split(" | ")[4:8] == ["2.00", "2.00", "80.00 µs", "80.00 µs"]
    (row,) = json.loads(render.to_json(d))["danger"]
    assert (row["a_calls"], row["b_calls"], row["a_total_ns"], row["b_total_ns"]) == (
        *(40, 60, 1_600_000, 2_400_000),
    )
    assert (row["a_calls_per_step"], row["b_calls_per_step"]) == (2.0, 2.0)
    assert (row["a_per_step_ns"], row["b_per_step_ns"]) == (80_000.0, 80_000.0)


def test_the_same_steps_keep_the_danger_totals(tmp_path):
    d = pair(tmp_path, build_steps(tmp_path, "a", 20), build_steps(tmp_path, "b", 20))
    from tracelens.compare import render

    assert "### Danger-zone kernels\n" in render.markdown(d)
    assert d.danger["a_per_step_ns"].to_list() == [80_000.0]


def test_without_steps_the_danger_totals_say_their_scale(tmp_path):
    """No repeating step, 300 vs 450 launches: the totals stay, and the title says each
    change is judged against A's total scaled by the launches (it said nothing)."""
    from test_diff_pairs import build_stepless

    from tracelens.compare import render

    d = pair(tmp_path, build_stepless(tmp_path, "a", 300), build_stepless(tmp_path, "b", 450))
    assert d.steps_a is None and d.steps_b is None
    assert (
        "### Danger-zone kernels (totals of each capture; each change is judged against A's "
        "total × 1.5, B's kernel launches over A's)\n"
    ) in render.markdown(d)
