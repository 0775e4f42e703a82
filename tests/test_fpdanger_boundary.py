"""A launch inserted (removed) early in a unit's listed launches pushes A's last listed launch
past B's list (pulls one into it). Aligned to their ends, the lists read as that launch
removed at the end of the list and, by the counts past the lists, one launch of it added:
one insertion counted 2 launches added and 1 removed (or, at the last listed slot, a variant
change plus a launch added). The lists are now aligned up to the last launch they share and
what lies past it is matched against the counts first (fingerprint.listed). Block sizes of
5 and 8 launches (fingerprint.toml is read through ``build.settings``)."""

from __future__ import annotations

import importlib

import pytest
from fixtures.fingerprint_runs import GEMM_SPLITK, Run, build_run

from tracelens import fingerprint as fp

build_module = importlib.import_module("tracelens.fingerprint.build")
MERGE_NAME = "vllm::merge_attn_states_kernel"  # fixtures.fingerprint_runs.MERGE, as listed


def _block_of(monkeypatch, launches: int) -> None:
    small = build_module.Settings(build_module.settings().math_fields, launches, 20_000)
    monkeypatch.setattr(build_module, "settings", lambda: small)
    # a capture without structure: one unit per device, all its launches
    none = ({"method": "none", "count": 0}, [], None)
    monkeypatch.setattr(build_module, "_steps_rows", lambda trace, *_: none)


@pytest.fixture
def pair(tmp_path, monkeypatch):
    """A (the baseline) and B (the merge of cascade attention inserted at launch #5)
    fingerprinted with units listing their first ``launches``."""

    def make(launches: int, b_run: Run | None = None) -> tuple[dict, dict]:
        _block_of(monkeypatch, launches)
        a = fp(build_run(tmp_path / f"a{launches}.sqlite", Run(nvtx=False)))
        b_run = b_run or Run(nvtx=False, merge={(1, 0)})
        return a, fp(build_run(tmp_path / f"b{launches}.sqlite", b_run))

    return make


def test_an_insertion_early_in_the_list_is_one_launch_added(pair):
    a, b = pair(8)
    assert len(b["paths"][0]["sequence"]) == 8 and b["paths"][0]["launches"] == 22
    diff = fp.compare(a, b)
    f = diff.figures
    assert f["launches_added"] == 1 and f["launches_removed"] == 0  # were 2 and 1
    (region,) = diff.regions
    (c,) = region.changes
    assert (c.kind, c.position, c.b.name.split("<")[0]) == ("added", 5, MERGE_NAME)
    assert region.counted == ()
    assert f["danger_added"] == 1  # A runs no merge: its rule is new
    back = fp.compare(b, a)
    assert back.figures["launches_removed"] == 1 and back.figures["launches_added"] == 0
    (c,) = back.regions[0].changes
    assert (c.kind, c.position) == ("removed", 5)
    text = fp.board.text(diff, "a", "b")
    assert "1 launch added, 0 removed" in text and "past the listed launches" not in text


def test_an_insertion_at_the_last_listed_slot_is_no_variant_change(pair):
    a, b = pair(5)
    diff = fp.compare(a, b)
    f = diff.figures
    assert f["variant_changed"] == 0 and f["launches_added"] == 1  # were 1 and 1 (+ 1 counted)
    (c,) = diff.regions[0].changes
    assert (c.kind, c.position, c.b.name.split("<")[0]) == ("added", 5, MERGE_NAME)
    assert diff.first.change == c and diff.first.launch == 5


def test_a_change_at_the_last_listed_slot_keeps_its_place(pair):
    """The GEMM of layer 1 (launch #6) replaced: no launch pushed past the lists."""
    a, b = pair(6, Run(nvtx=False, gemm={(1, 1): GEMM_SPLITK}))
    diff = fp.compare(a, b)
    (region,) = diff.regions
    (c,) = region.changes
    assert (c.kind, c.position, c.b.name) == ("variant", 6, GEMM_SPLITK)
    assert region.counted == () and diff.figures["danger_added"] == 1


def _doc(sequence: list[int], counts: list[list[int]], blocks: list[str]) -> dict:
    """One region of 10 launches over two kernels, the first 4 listed."""
    variants = [
        {"id": i, "name": f"kernel_{i}", "grid": [1, 1, 1], "block": [128, 1, 1]} for i in range(2)
    ]
    entry = {"device": 0, "region": ["r"], "steps": [1], "launches": 10}
    entry |= {"sequence": sequence, "blocks": blocks, "counts": counts}
    return {"steps": {"method": "range", "count": 1}, "variants": variants, "paths": [entry]}


def test_two_launches_trading_places_across_the_list_end_are_one_order_change():
    """A's 4th launch is kernel_1, B's kernel_0, and past the lists the other way round:
    the same variants as often in another order (was two variant changes)."""
    a = _doc([0, 1, 0, 1], [[0, 5], [1, 5]], ["1.2", "3.4", "5.6"])
    b = _doc([0, 1, 0, 0], [[0, 5], [1, 5]], ["1.3", "3.5", "5.6"])
    diff = fp.compare(a, b)
    f = diff.figures
    assert f["order_changed"] == 1 and f["variant_changed"] == 0
    (region,) = diff.regions
    assert region.changes == ()
    assert [(c.kind, c.launches) for c in region.counted] == [("order", 1)]
