"""Launches past a unit's listed ones count in the path comparison.

A unit (device, region, step) of more than ``block_launches`` launches lists its first
block one by one and keeps the rest as block digests and launches per variant. The
comparison aligned the listed launches only: a whole device added (1.25M launches on the
5M-kernel bench trace) read "4,096 launches added", and a kernel switched, launches added
or removed past the first block counted nothing (``path_changed`` 1, every other figure 0),
so ``--fail-if variant_changed`` or ``launches_added`` passed. These tests set the block to
5 launches (fingerprint.toml is read through ``build.settings``)."""

from __future__ import annotations

import importlib
import json

import pytest
from conftest import run_cli
from fixtures.fingerprint_runs import GEMM_SPLITK, Run, build_run
from test_diffpairs_devices import replicas

from tracelens import fingerprint as fp

build_module = importlib.import_module("tracelens.fingerprint.build")
budget = importlib.import_module("tracelens.fingerprint.budget")


@pytest.fixture
def block_of_5(monkeypatch):
    small = build_module.Settings(build_module.settings().math_fields, 5, 20_000)
    monkeypatch.setattr(build_module, "settings", lambda: small)
    # a capture without structure: one unit per device, all its launches
    none = ({"method": "none", "count": 0}, [], None)
    monkeypatch.setattr(build_module, "_steps_rows", lambda trace, *_: none)


def test_a_whole_device_added_counts_all_its_launches(tmp_path, block_of_5, capsys):
    a, b = fp(replicas(tmp_path, "a", 1)), fp(replicas(tmp_path, "b", 2))
    assert [(e["device"], e["launches"], len(e["sequence"])) for e in b["paths"]] == [
        (0, 240, 5),
        (1, 240, 5),
    ]
    diff = fp.compare(a, b)
    f = diff.figures
    assert f["launches_added"] == f["kernels_added"] == 240  # was 5: the listed ones
    assert f["launches_removed"] == 0 and f["danger_added"] == 0  # device 0 runs them in A
    (region,) = diff.regions
    assert region.status == "added" and region.same_as == 0
    assert region.unlisted == "240 launches added, the first 5 listed"
    assert sum(c.launches for c in region.counted) == 235
    text = fp.board.text(diff, "a", "b")
    assert "240 launches added, 0 removed" in text
    assert "past the listed launches, by variant counts:" in text
    assert "first change of math" not in text  # the first divergence is that change
    back = fp.compare(b, a)
    assert back.figures["launches_removed"] == 240 and back.figures["launches_added"] == 0
    assert back.regions[0].unlisted == "240 launches removed, the first 5 listed"
    # the gates and the JSON say as much
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(fp.dumps(a))
    pb.write_text(fp.dumps(b))
    rc, _out, err = run_cli(["diff", pa, pb, "--fail-if", "launches_added>=240"], capsys)
    assert rc == 1 and "launches_added = 240" in err
    rc, out, _err = run_cli(["diff", pa, pb, "-f", "json"], capsys)
    (listed,) = json.loads(out)["regions"]
    assert sum(c["launches"] for c in listed["counted"]) == 235
    assert {c["kind"] for c in listed["counted"]} == {"added"}


def test_a_kernel_switched_past_the_listed_launches_is_a_variant_change(tmp_path, block_of_5):
    a = fp(build_run(tmp_path / "a.sqlite", Run(nvtx=False)))
    b = fp(build_run(tmp_path / "b.sqlite", Run(nvtx=False, gemm={(3, 1): GEMM_SPLITK})))
    diff = fp.compare(a, b)
    (region,) = diff.regions
    assert region.changes == ()  # the listed launches agree: the switch is at launch #16
    (c,) = region.counted
    assert (c.kind, c.launches, c.b.name) == ("variant", 1, GEMM_SPLITK)
    assert c.danger_new == ("gemm_split_k",)
    f = diff.figures
    assert f["variant_changed"] == 1 and f["danger_added"] == 1  # both were 0
    assert f["launches_added"] == f["launches_removed"] == 0
    text = fp.board.text(diff, "a", "b")
    assert f"variant  ×1    {GEMM_SPLITK} replaced " in text


def test_a_longer_capture_counts_the_launches_past_the_listed_ones(tmp_path, block_of_5):
    a = fp(build_run(tmp_path / "a.sqlite", Run(nvtx=False)))
    longer = fp(build_run(tmp_path / "c.sqlite", Run(nvtx=False, steps=5)))
    added = longer["launches"] - a["launches"]
    assert added == 14
    diff = fp.compare(a, longer)
    assert diff.figures["launches_added"] == added and diff.figures["launches_removed"] == 0
    assert fp.compare(longer, a).figures["launches_removed"] == added
    assert "14 launches added, 0 removed" in fp.board.text(diff, "a", "c")


def _long_doc(blocks: list[str]) -> dict:
    """One region of 10 launches over two kernels, the first 4 listed."""
    variants = [
        {"id": i, "name": f"kernel_{i}", "grid": [1, 1, 1], "block": [128, 1, 1]} for i in range(2)
    ]
    entry = {"device": 0, "region": ["r"], "steps": [1], "launches": 10}
    entry |= {"sequence": [0, 1, 0, 1], "blocks": blocks, "counts": [[0, 5], [1, 5]]}
    return {"steps": {"method": "range", "count": 1}, "variants": variants, "paths": [entry]}


def test_the_same_launches_in_another_order_past_the_listed_ones_is_an_order_change():
    a = _long_doc(["1.2", "3.4", "5.6"])
    b = _long_doc(["1.2", "3.5", "5.6"])
    assert fp.compare(a, a).identical
    diff = fp.compare(a, b)
    assert diff.figures["order_changed"] == 1 and diff.figures["path_changed"] == 1
    (region,) = diff.regions
    assert [(c.kind, c.launches) for c in region.counted] == [("order", 1)]
    assert "order    ×1    the same variants as often, in another order" in fp.board.text(
        diff, "a", "b"
    )


def test_regions_past_the_alignment_budget_count_their_launches(monkeypatch):
    """Compared by variant counts (not aligned), a region still counts what differs."""
    a, b = _long_doc(["1.2", "3.4", "5.6"]), _long_doc(["1.2", "3.4", "5.6"])
    b["paths"][0] |= {"sequence": [1, 0, 1, 1], "counts": [[0, 3], [1, 7]]}
    monkeypatch.setattr(budget, "alignment_steps", lambda: 0)
    diff = fp.compare(a, b)
    assert diff.note is not None and "ran out" in diff.note
    (region,) = diff.regions
    assert region.changes == () and "not aligned" in region.unlisted
    # kernel_0 -> kernel_1 twice: one family ("other"), so a variant change
    assert diff.figures["variant_changed"] == 2


def test_regions_compared_over_all_steps_count_every_launch_for_a_move():
    """Steps found otherwise (range against marker): each region's steps are one unit. A's
    held a long step (its counts) and a short one (listed only), and the launches per
    variant of that unit were the long step's alone: B's same launches, the short step on
    device 1, read as "3 launches added" on a device only B holds, not as launches moved."""
    long = {"device": 0, "region": ["r"], "steps": [1], "launches": 10}
    long |= {"sequence": [0, 1, 0, 1], "blocks": ["1.2", "3.4", "5.6"], "counts": [[0, 5], [1, 5]]}
    short = {"device": 0, "region": ["r"], "steps": [2], "launches": 3, "sequence": [1, 1, 0]}
    a, b = _long_doc([]), _long_doc([])
    a |= {"steps": {"method": "range", "count": 2}, "paths": [long, short]}
    b |= {"steps": {"method": "marker", "count": 2}, "paths": [long, {**short, "device": 1}]}
    diff = fp.compare(a, b)
    assert diff.note.startswith("the steps differ")
    assert diff.identical and diff.figures["launches_moved"] == 3
    assert diff.figures["launches_added"] == 0 and diff.figures["path_changed"] == 0
