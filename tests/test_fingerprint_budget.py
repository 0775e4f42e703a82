"""The alignment work of one fingerprint comparison is bounded (fingerprint.toml,
limits.alignment_steps): regions past the budget are compared by their variant counts, and
the board says how many, claiming no alignment it did not do."""

from __future__ import annotations

import importlib
import random

from tracelens import fingerprint as fp

budget = importlib.import_module("tracelens.fingerprint.budget")
board = importlib.import_module("tracelens.fingerprint.board")

REGIONS, LAUNCHES, NAMES = 4, 200, 20


def _doc(shuffle_seed: int | None) -> dict:
    """``REGIONS`` regions of ``LAUNCHES`` launches over ``NAMES`` kernels; with a seed,
    each region's launches in another order with its last launch another kernel (the same
    counts but two: the same counts would be a launch-order change, never aligned)."""
    variants = [
        {"id": i, "name": f"kernel_{i}", "grid": [1, 1, 1], "block": [128, 1, 1]}
        for i in range(NAMES)
    ]
    paths = []
    for r in range(REGIONS):
        sequence = [i % NAMES for i in range(LAUNCHES)]
        if shuffle_seed is not None:
            random.Random(shuffle_seed * 100 + r).shuffle(sequence)
            sequence[-1] = (sequence[-1] + 1) % NAMES
        entry = {"device": 0, "region": [f"layer.{r}"], "steps": [1], "launches": LAUNCHES}
        paths.append({**entry, "sequence": sequence})
    return {"steps": {"method": "range", "count": 1}, "variants": variants, "paths": paths}


def _steps_of_one_region(a: dict, b: dict, monkeypatch) -> int:
    """The steps the alignment of the first region of ``a`` and ``b`` spends."""
    asked: list[int] = []
    real = budget.spend
    monkeypatch.setattr(budget, "spend", lambda steps: asked.append(steps) or real(steps))
    fp.compare({**a, "paths": a["paths"][:1]}, {**b, "paths": b["paths"][:1]})
    monkeypatch.setattr(budget, "spend", real)
    return sum(asked)


def test_regions_past_the_budget_are_compared_by_counts_and_the_board_says_so(monkeypatch):
    a, b = _doc(None), _doc(1)
    full = fp.compare(a, b)  # the default budget aligns every region launch by launch
    assert full.note is None
    assert len(full.regions) == REGIONS and all(r.changes for r in full.regions)
    # a budget that holds the first region's alignment only
    per_region = _steps_of_one_region(a, b, monkeypatch)
    assert 0 < per_region < budget.alignment_steps() // REGIONS
    monkeypatch.setattr(budget, "alignment_steps", lambda: per_region + per_region // 2)
    cut = fp.compare(a, b)
    first, *rest = cut.regions
    assert first == full.regions[0]  # aligned as without a budget
    assert len(rest) == REGIONS - 1
    for region in rest:
        assert region.changes == ()
        assert region.unlisted == (
            f"{LAUNCHES} → {LAUNCHES} launches, not aligned launch by launch (the "
            "comparison's alignment budget ran out); 1 variants run more often, 1 less often"
        )
    assert cut.note == (
        "the alignment budget (fingerprint.toml limits.alignment_steps) ran out: 3 regions "
        "compared by variant counts only, not launch by launch"
    )
    text = board.text(cut, "a.json", "b.json")
    assert f"note: {cut.note}" in text and "not aligned launch by launch" in text
    assert cut.figures["path_changed"] == 1 and cut.figures["regions_changed"] == REGIONS


def test_outside_a_comparison_nothing_is_counted():
    """The sequences aligned alone (no comparison's budget) spend nothing and never stop."""
    compare = importlib.import_module("tracelens.fingerprint.compare")
    edits = importlib.import_module("tracelens.fingerprint.edits")
    a, b = _doc(None), _doc(1)
    kernels = [
        compare.Kernel(f"kernel_{i}", (1, 1, 1), (128, 1, 1), "other", (), ()) for i in range(NAMES)
    ]
    x = [kernels[i] for i in a["paths"][0]["sequence"]]
    y = [kernels[i] for i in b["paths"][0]["sequence"]]
    assert edits._sequence_changes(x, y)
