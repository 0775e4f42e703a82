"""tracelens.fingerprint.compare and .edits: the alignment of two launch sequences is a minimal edit
script, so a repeated program (a region over all its steps, a long unit) is never paired a
period off (difflib's longest block first reported 8,405 changes for 6 real ones)."""

from __future__ import annotations

import importlib
import random

import pytest

compare = importlib.import_module("tracelens.fingerprint.compare")
edits = importlib.import_module("tracelens.fingerprint.edits")
Kernel = compare.Kernel

STEP = 30  # kernels in one step of the repeated program


def _kernel(name: str, grid: int = 1, family: str = "gemm") -> Kernel:
    return Kernel(name, (grid, 1, 1), (128, 1, 1), family, (), ())


def _program(steps: int, changes: dict[tuple[int, int], Kernel | None] = None, added=()):
    """``steps`` repeats of a STEP-kernel step; ``changes``: (step, slot) -> the kernel
    launched there instead (None: not launched); ``added``: (step, slot) after which a
    merge kernel is launched."""
    changes, out = changes or {}, []
    for step in range(steps):
        for slot in range(STEP):
            kernel = changes.get((step, slot), _kernel(f"k{slot}"))
            if kernel is not None:
                out.append(kernel)
            if (step, slot) in added:
                out.append(_kernel("merge", family="other"))
    return out


def _at(step: int, slot: int) -> int:
    """The 1-based position of (step, slot) in an unchanged program."""
    return step * STEP + slot + 1


def test_a_repeated_program_reports_exactly_its_real_changes():
    """9,000 launches, 300 steps of 30: a variant, a configuration, an added and a
    removed kernel, each in one step, and nothing else."""
    a = _program(300)
    b = _program(
        300,
        {(50, 7): _kernel("k7_splitK"), (120, 3): _kernel("k3", grid=8), (250, 20): None},
        added={(180, 12)},
    )
    changes = edits._sequence_changes(a, b)
    assert [(c.kind, c.position) for c in changes] == [
        ("variant", _at(50, 7)),
        ("config", _at(120, 3)),
        ("added", _at(180, 12) + 1),
        ("removed", _at(250, 20)),
    ]
    assert changes[0].a.name == "k7" and changes[0].b.name == "k7_splitK"
    assert changes[2].b.name == "merge" and changes[3].a.name == "k20"


def test_two_added_kernels_sixty_launches_apart_are_both_added():
    """The case a 512-launch window of difflib paired wrongly."""
    a = _program(20)
    b = _program(20, added={(5, 4), (7, 4)})
    changes = edits._sequence_changes(a, b)
    assert [(c.kind, c.position) for c in changes] == [
        ("added", _at(5, 4) + 1),
        ("added", _at(7, 4) + 2),
    ]


def _doc(program: list[Kernel]) -> dict:
    """A fingerprint document with one region over the steps of ``program`` (the launches
    of each step; a merge kernel belongs to the step before it). Launches before the first
    step that starts with k0 (a warm-up, a step the capture started inside) and a last step
    of fewer than STEP launches (one it ended inside) are outside the steps, as the
    document says them (``before``, ``after``)."""
    steps = [[]]
    for k in program:
        if k.name == "k0" and len(steps[-1]) > 1:
            steps.append([])
        steps[-1].append(k)
    before = steps.pop(0) if steps[0] and steps[0][0].name != "k0" else []
    after = steps.pop() if steps and len(steps[-1]) < STEP else []
    ids = {k: i for i, k in enumerate(dict.fromkeys(program))}
    variants = [
        {"id": i, "name": k.name, "grid": list(k.grid), "block": list(k.block), "family": k.family}
        for k, i in ids.items()
    ]
    paths = [
        {
            "device": 0,
            "region": ["layer"],
            "steps": [s],
            "launches": len(step),
            "sequence": [ids[k] for k in step],
        }
        for s, step in enumerate(steps, 1)
    ]
    if before or after:
        outside = [ids[k] for k in (*before, *after)]
        entry = {"device": 0, "region": ["layer"], "steps": [], "launches": len(outside)}
        entry["sequence"] = outside
        entry.update({k: n for k, n in (("before", len(before)), ("after", len(after))) if n})
        paths.insert(0, entry)
    doc = {"steps": {"method": "range", "count": len(steps)}, "variants": variants}
    return {**doc, "paths": paths}


def test_one_step_fewer_is_a_shorter_capture_not_a_change():
    """B captured one step fewer: the region is compared over all its steps at once, B's
    launches are A's without the last step, and that is said once, not 30 removed kernels."""
    diff = compare.compare(_doc(_program(300)), _doc(_program(299)))
    assert diff.identical and diff.figures["path_changed"] == 0
    assert diff.capture == (
        f"B's capture ends earlier (it holds 299 steps, A 300): A's last {STEP} launches are "
        "past its end, not compared; which capture started later is not known: every step is "
        "the same program, and a capture that started a step later reads as one that ended a "
        "step earlier (the documents hold no times)"
    )
    assert diff.note.endswith(". " + diff.capture)


def test_one_step_fewer_and_a_switch_counts_each_change_once():
    """The step B did not capture is not removed; the switch and the merge kernel inside
    the steps both hold are changes."""
    a = _program(300)
    b = _program(300, {(100, 7): _kernel("k7_splitK")}, added={(200, 3)})[:-STEP]
    diff = compare.compare(_doc(a), _doc(b))
    figures = {k: diff.figures[k] for k in ("variant_changed", "kernels_added")}
    assert figures == {"variant_changed": 1, "kernels_added": 1}
    assert diff.figures["kernels_removed"] == 0 and diff.figures["config_changed"] == 0
    assert diff.capture.startswith(
        f"B's capture ends earlier (it holds 299 steps, A 300): A's last {STEP} launches are "
        "past its end, not compared; "
    )
    assert diff.first_math.change.kind == "variant"
    assert diff.first_math.change.position == _at(100, 7)


def test_a_replaced_stretch_pairs_kernels_by_family():
    """Inside a replaced stretch the second pass pairs a GEMM with the GEMM that replaced
    it, and the copy with the copy, as before."""
    a = [_kernel("x"), _kernel("gemm_a"), _kernel("copy_a", family="copy"), _kernel("y")]
    b = [_kernel("x"), _kernel("copy_b", family="copy"), _kernel("y")]
    changes = edits._sequence_changes(a, b)
    assert [(c.kind, c.position, c.a and c.a.name, c.b and c.b.name) for c in changes] == [
        ("removed", 2, "gemm_a", None),
        ("variant", 2, "copy_a", "copy_b"),
    ]


def test_past_the_edit_bound_the_windows_take_over(monkeypatch):
    """More than _EDITS_MAX edits: no edit script over the whole sequences, the windowed
    route aligns them (each window by its own edit script) and still finds every change."""
    monkeypatch.setattr(edits, "_EDITS_MAX", 4)
    a = _program(400)
    added = {(s, 4) for s in range(10, 400, 40)} | {(12, 4)}
    b = _program(400, added=added)
    assert edits._matching_blocks([k.name for k in a], [k.name for k in b]) is None
    assert len(a) * len(b) > edits._EXACT_PAIRS
    changes = edits._sequence_changes(a, b)
    before = sorted(added)
    expected = [("added", _at(s, 5) + before.index((s, 4))) for s, _ in before]
    assert [(c.kind, c.position) for c in changes] == expected


@pytest.mark.parametrize("seed", range(4))
def test_the_edit_script_is_minimal(seed):
    """Against the textbook quadratic LCS on small random sequences."""

    def lcs(x, y):
        row = [0] * (len(y) + 1)
        for u in x:
            prev, row = row, [0]
            for j, v in enumerate(y):
                row.append(prev[j] + 1 if u == v else max(prev[j + 1], row[j]))
        return row[-1]

    rng = random.Random(seed)
    for _ in range(200):
        x = [rng.choice("abc") for _ in range(rng.randint(0, 14))]
        y = [rng.choice("abcd") for _ in range(rng.randint(0, 14))]
        blocks = edits._matching_blocks(x, y)
        assert blocks[-1] == (len(x), len(y), 0)
        end_i = end_j = 0
        for i, j, size in blocks:
            assert i >= end_i and j >= end_j and x[i : i + size] == y[j : j + size]
            end_i, end_j = i + size, j + size
        assert sum(size for _i, _j, size in blocks) == lcs(x, y)


def test_a_later_start_and_a_cut_mid_step_are_capture_ends():
    """B starts after A's warm-up and three steps in, and ends inside a step: its launches
    are a slice of A's, found as one (no alignment), and both ends are stated. (Step 3
    starts with another grid in both runs, so the slice has one place in A.)"""
    warmup = [_kernel("autotune", family="other"), _kernel("k0", grid=4)]
    landmark = {(3, 0): _kernel("k0", grid=2)}
    a = warmup + _program(300, landmark)
    b = _program(300, landmark)[3 * STEP : -STEP - 7]
    diff = compare.compare(_doc(a), _doc(b))
    assert diff.identical
    head, tail = len(warmup) + 3 * STEP, STEP + 7
    assert diff.capture == (
        f"B's capture starts later (it holds 295 steps, A 300): A's first {head} launches are "
        f"before its start, not compared; B's capture ends earlier: A's last {tail} launches "
        "are past its end, not compared"
    )


def test_unrelated_programs_keep_their_ends_as_changes():
    """Two programs that share kernels but not their order: what one alone holds at its end
    is a change like the rest, not a capture difference."""
    other = [_kernel(f"k{(7 * i) % STEP}") for i in range(40 * STEP)]
    diff = compare.compare(_doc(_program(300)), _doc(other))
    assert diff.capture is None and "capture" not in diff.to_dict()
    assert diff.figures["kernels_removed"] > 0 and diff.figures["path_changed"] == 1


def test_a_slice_is_found_by_whole_kernels_not_names():
    """The same names with another grid in the span both hold: not a slice; the grid is a
    configuration change and the missing step still a capture difference."""
    b = _program(299, {(5, 2): _kernel("k2", grid=8)})
    diff = compare.compare(_doc(_program(300)), _doc(b))
    assert diff.figures["config_changed"] == 1 and diff.figures["kernels_removed"] == 0
    assert diff.capture.startswith(
        f"B's capture ends earlier (it holds 299 steps, A 300): A's last {STEP} launches"
    )


def test_a_capture_cut_short_past_the_edit_bound_still_names_only_the_switch(monkeypatch):
    """More launches lacking than _EDITS_MAX: the whole alignment is by windows, which
    need not put them at the end; B against A's first launches as many finds the switch
    and nothing else."""
    monkeypatch.setattr(edits, "_EDITS_MAX", 20)
    b = _program(100, {(40, 7): _kernel("k7_splitK")})
    diff = compare.compare(_doc(_program(300)), _doc(b))
    f = diff.figures
    assert (f["variant_changed"], f["kernels_removed"], f["kernels_added"]) == (1, 0, 0)
    assert diff.first.change.position == _at(40, 7)
    assert diff.capture.startswith(
        f"B's capture ends earlier (it holds 100 steps, A 300): A's last {200 * STEP:,} "
        "launches are past its end, not compared; "
    )
