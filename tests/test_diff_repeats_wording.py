"""The path clue says "in every step ... (N steps)" only of the steps the board counts: a
diff narrowed to one step (--step 2) repeats its layers' launch motif 28 times, which the
clue called "28 steps" beside the board's "A 1 step"; it now says repeats of the motif."""

from __future__ import annotations

import json

from conftest import run_cli


def _path_evidence(out: str) -> str:
    doc = json.loads(out)
    (clue,) = [c for c in doc["clues"] if c["id"] == "same_count_different_path"]
    return clue["evidence"]


def test_one_selected_step_says_repeats_not_steps(capsys):
    code, out, err = run_cli(["diff", "--demo", "--step", "2", "-f", "json"], capsys)
    assert code == 0, err
    evidence = _path_evidence(out)
    assert (
        "; in every repeat of its launch motif (14 launches, 28 repeats), launch #3 changed: "
        "flash::flash_fwd_kernel added (6 more changes per repeat), 169 differ;"
    ) in evidence
    assert "28 steps" not in evidence


def test_the_whole_captures_steps_are_still_steps(capsys):
    code, out, err = run_cli(["diff", "--demo", "-f", "json"], capsys)
    assert code == 0, err
    assert "; in every step, launch #4 changed: " in _path_evidence(out)
    assert "(4 steps, 9+ more changes per step)" in _path_evidence(out)
