"""A region whose launches are the same variants as often as the baseline's, in another order,
is one launch-order change of the path (``order``), stated as such in every format: not
kernels added and removed. It still fails --check and --fail-if path_changed (the path is
the variants in launch order), not variant_changed or danger_added."""

from __future__ import annotations

import importlib
import json
import random

from conftest import run_cli
from test_diff_order import build

from tracelens import fingerprint as fp

compare = importlib.import_module("tracelens.fingerprint.compare")
board = importlib.import_module("tracelens.fingerprint.board")
budget = importlib.import_module("tracelens.fingerprint.budget")


def _doc(sequences: list[list[int]], names: int = 6, launches: int | None = None) -> dict:
    """One region per sequence (variant ids), in step 1."""
    variants = [
        {"id": i, "name": f"kern_{i}", "grid": [i + 1, 1, 1], "block": [128, 1, 1]}
        for i in range(names)
    ]
    paths = [
        {
            "device": 0,
            "region": [f"layer.{r}"],
            "steps": [1],
            "launches": launches or len(seq),
            "sequence": seq,
        }
        for r, seq in enumerate(sequences)
    ]
    return {"steps": {"method": "range", "count": 1}, "variants": variants, "paths": paths}


def test_a_reversed_region_is_one_order_change_not_kernels_added_and_removed():
    d = fp.compare(_doc([[0, 1, 2, 3, 4, 5]]), _doc([[0, 1, 5, 4, 3, 2]]))
    (region,) = d.regions
    (change,) = region.changes
    assert (change.kind, change.position) == (compare.ORDER, 3)
    assert (change.a.name, change.b.name) == ("kern_2", "kern_5")
    assert change.danger_new == ()
    f = d.figures
    assert f["path_changed"] == 1 and f["order_changed"] == 1
    assert f["kernels_added"] == f["kernels_removed"] == f["variant_changed"] == 0
    assert f["danger_added"] == 0 and f["config_changed"] == 0
    assert d.first.change == change and d.first_math is None  # the same math, reordered
    text = board.text(d, "a.json", "b.json")
    assert "launch #3 of region layer.0: kern_5 where A had kern_2 (the same kernels as" in text
    assert "    order    #3    kern_5 where A had kern_2" in text
    assert "1 launch order changed" in text
    assert "added" not in text.replace("0 launches added", "")
    doc = json.loads(board.to_json(d, "a.json", "b.json"))
    assert doc["figures"]["order_changed"] == 1
    assert [c["kind"] for c in doc["regions"][0]["changes"]] == ["order"]


def test_a_reorder_with_a_kernel_more_is_still_aligned():
    """Not the same counts: the alignment names the added kernel, as before."""
    d = fp.compare(_doc([[0, 1, 2, 3]]), _doc([[0, 1, 3, 2, 2]]))
    kinds = sorted(c.kind for c in d.regions[0].changes)
    assert compare.ORDER not in kinds and compare.ADDED in kinds
    assert d.figures["order_changed"] == 0


def test_a_board_without_reorders_reads_as_before():
    d = fp.compare(_doc([[0, 1, 2]]), _doc([[0, 1, 3]]))
    assert "launch orders" not in board.text(d, "a.json", "b.json")
    assert d.figures["order_changed"] == 0  # a gate may name it on any comparison


def test_reorders_spend_no_alignment_budget(monkeypatch):
    """Two shuffles of the same 200 launches: the edit script would give up on each region;
    the counts say it is a reorder without aligning anything."""
    sequences = []
    for r in range(4):
        seq = [i % 20 for i in range(200)]
        random.Random(r).shuffle(seq)
        sequences.append(seq)
    base = [[i % 20 for i in range(200)] for _ in range(4)]
    spent: list[int] = []
    monkeypatch.setattr(budget, "spend", lambda steps: spent.append(steps))
    d = fp.compare(_doc(base, names=20), _doc(sequences, names=20))
    assert spent == []
    assert d.note is None and len(d.regions) == 4
    assert all([c.kind for c in r.changes] == [compare.ORDER] for r in d.regions)
    assert d.figures["order_changed"] == 4


def test_a_region_reordered_when_the_steps_differ_is_an_order_change_too():
    """Steps found otherwise (compared over whole captures): the same launches in another
    order are still one order change, and no capture end."""
    a, b = _doc([[0, 1, 2, 3], [4, 5]]), _doc([[0, 2, 1, 3], [4, 5]])
    b["steps"] = {"method": "period", "count": 1}
    d = fp.compare(a, b)
    assert d.note.startswith("the steps differ") and d.capture is None
    (region,) = d.regions
    assert [(c.kind, c.position) for c in region.changes] == [(compare.ORDER, 2)]
    assert d.figures["order_changed"] == 1 and d.figures["kernels_added"] == 0


def test_a_long_region_with_other_unlisted_counts_is_not_an_order_change():
    """A region's listed launches reordered but its unlisted ones counted otherwise: aligned."""
    a, b = _doc([[0, 1, 2]], launches=10), _doc([[2, 1, 0]], launches=10)
    a["paths"][0] |= {"blocks": ["x", "y"], "counts": [[0, 4], [1, 3], [2, 3]]}
    b["paths"][0] |= {"blocks": ["x2", "y"], "counts": [[0, 3], [1, 4], [2, 3]]}
    d = fp.compare(a, b)
    assert compare.ORDER not in {c.kind for c in d.regions[0].changes}


def test_check_and_diff_of_the_reviewers_pair(tmp_path, capsys):
    """fingerprint --check and diff of a baseline with a run of the same six kernels per
    step, reversed: an order change in every step; path_changed fails, variant_changed and
    danger_added pass."""
    a = build(tmp_path / "r1.sqlite", [0, 1, 2, 3, 4, 5])
    b = build(tmp_path / "r2.sqlite", [5, 4, 3, 2, 1, 0])
    base = tmp_path / "r1.json"
    assert run_cli(["fingerprint", a, "-o", base], capsys)[0] == 0
    rc, out, _ = run_cli(["fingerprint", b, "--check", base], capsys)
    assert rc == 1
    assert "launch #1 of step 1: kern_5 where A had kern_0 (the same kernels as often" in out
    assert "0 launches added, 0 removed, 6 launch orders changed" in out
    assert "    order    #1    kern_5 where A had kern_0" in out
    rc, out, _ = run_cli(["diff", base, b, "-f", "json"], capsys)
    assert rc == 0 and json.loads(out)["figures"]["order_changed"] == 6
    rc, out, _ = run_cli(["diff", base, b, "-f", "markdown"], capsys)
    assert rc == 0 and "    order    #1    kern_5" in out
    assert run_cli(["diff", base, b, "--fail-if", "path_changed"], capsys)[0] == 1
    for gate in ("variant_changed", "danger_added"):
        assert run_cli(["diff", base, b, "--fail-if", gate], capsys)[0] == 0
    # order_changed is a bare gate name too (> 0), and names the path comparison between
    # two traces as the other path gates do
    for argv in (["diff", base, b], ["diff", a, b]):
        assert run_cli([*argv, "--fail-if", "order_changed"], capsys)[0] == 1
    assert run_cli(["diff", a, a, "--fail-if", "order_changed"], capsys)[0] == 0
