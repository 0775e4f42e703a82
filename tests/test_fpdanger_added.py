"""An added launch brings a new danger rule (``danger_added``) only when A runs no launch of
that kernel in the same unit (region and step, every launch of A's, listed or counted past
the listed ones). A longer capture of the same program counted its 4 extra
``flash_fwd_splitkv_kernel`` launches (attention_split_kv) as 4 new dangers, and one more
launch of a kernel A runs in the listed part counted as well: ``--fail-if danger_added``
failed on every longer capture. A kernel A runs nowhere there still counts."""

from __future__ import annotations

import importlib

import pytest
from fixtures.fingerprint_runs import Run, build_run

from tracelens import fingerprint as fp

build_module = importlib.import_module("tracelens.fingerprint.build")


@pytest.fixture
def block_of_5(monkeypatch):
    """Units list their first 5 launches (fingerprint.toml's block_launches, read through
    build.settings); a capture without structure: one unit per device."""
    small = build_module.Settings(build_module.settings().math_fields, 5, 20_000)
    monkeypatch.setattr(build_module, "settings", lambda: small)
    none = ({"method": "none", "count": 0}, [], None)
    monkeypatch.setattr(build_module, "_steps_rows", lambda trace, *_: none)


def test_a_longer_capture_brings_no_new_danger(tmp_path, block_of_5):
    a = fp(build_run(tmp_path / "a.sqlite", Run(nvtx=False)))
    longer = fp(build_run(tmp_path / "c.sqlite", Run(nvtx=False, steps=5)))
    diff = fp.compare(a, longer)
    f = diff.figures
    assert f["launches_added"] == 14
    assert f["danger_added"] == 0  # was 4: the attention launches A runs there too
    (region,) = diff.regions
    (attention,) = [c for c in region.counted if "attention_split_kv" in c.danger]
    assert attention.launches == 4 and attention.danger == ("attention_split_kv",)
    assert attention.danger_new == ()
    assert "14 launches added, 0 removed; 0 bring a new danger rule" in fp.board.text(
        diff, "a", "c"
    )


def test_a_kernel_a_runs_nowhere_in_the_unit_still_counts(tmp_path, block_of_5):
    """The merge of cascade attention added past the listed launches (launch #11): A runs
    no merge there, so it brings its rule."""
    a = fp(build_run(tmp_path / "a.sqlite", Run(nvtx=False)))
    b = fp(build_run(tmp_path / "b.sqlite", Run(nvtx=False, merge={(2, 0)})))
    diff = fp.compare(a, b)
    (c,) = diff.regions[0].counted
    assert (c.kind, c.launches, c.danger_new) == ("added", 1, ("attention_merge",))
    assert diff.figures["danger_added"] == 1


def _doc(sequence: list[int]) -> dict:
    """One region, every launch listed: kernel_0 (no rule) and kernel_1 (attention_split_kv)."""
    variants = [
        {"id": 0, "name": "kernel_0", "grid": [1, 1, 1], "block": [128, 1, 1]},
        {"id": 1, "name": "kernel_1", "grid": [1, 1, 1], "block": [128, 1, 1]},
        {"id": 2, "name": "kernel_2", "grid": [1, 1, 1], "block": [128, 1, 1]},
    ]
    variants[1]["danger"] = variants[2]["danger"] = ["attention_split_kv"]
    entry = {"device": 0, "region": ["r"], "steps": [1], "launches": len(sequence)}
    entry["sequence"] = sequence
    return {"steps": {"method": "range", "count": 1}, "variants": variants, "paths": [entry]}


def test_one_more_listed_launch_of_a_kernel_a_runs_there_brings_none():
    diff = fp.compare(_doc([0, 1, 0]), _doc([0, 1, 1, 0]))
    (region,) = diff.regions
    (c,) = region.changes
    assert c.kind == "added" and c.danger == ("attention_split_kv",) and c.danger_new == ()
    assert diff.figures["launches_added"] == 1 and diff.figures["danger_added"] == 0  # was 1


def test_a_listed_launch_of_a_kernel_a_runs_nowhere_there_brings_its_rule():
    """kernel_2 fires the same rule as A's kernel_1, but A never runs kernel_2 there."""
    diff = fp.compare(_doc([0, 1, 0]), _doc([0, 1, 2, 0]))
    (c,) = diff.regions[0].changes
    assert c.kind == "added" and c.danger_new == ("attention_split_kv",)
    assert diff.figures["danger_added"] == 1


def test_a_kernel_a_runs_in_another_step_only_still_counts():
    """Matched in the same region and step: A's kernel_1 in step 2 does not cover step 1."""
    a = _doc([0, 0])
    other = {**a["paths"][0], "steps": [2], "sequence": [0, 1], "launches": 2}
    a["paths"].append(other)
    a["steps"]["count"] = 2
    b = _doc([0, 1, 0])
    b["paths"].append(dict(other))
    b["steps"]["count"] = 2
    diff = fp.compare(a, b)
    (region,) = diff.regions
    assert region.steps == (1,) and diff.figures["danger_added"] == 1
