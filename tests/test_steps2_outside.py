"""What NVTX and period steps leave out is said, not dropped silently (issue #10):

- two threads of one process with their own 'step N' ranges (a training loop's and a data
  loader's) were numbered together, one sequence interleaving both (12 'steps' of 6
  iterations, or 6 steps numbered 1, 3, 5, ... when the loader launched nothing): the
  thread whose ranges launched the most defines the steps, the other thread's ranges are
  left out and counted (Steps.outside, the detail, JSON);
- launches before the first step's range (a capture that started inside an iteration)
  and after the last one's end were in no step without a word: counted and said.

Fixtures: tests/fixtures/step_threads.py.
"""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from fixtures.step_threads import build

import tracelens


@pytest.mark.parametrize("launches", [False, True], ids=["idle_loader", "prefetching_loader"])
def test_a_loader_threads_step_ranges_are_left_out_not_interleaved(tmp_path, launches):
    path = build(tmp_path / "t.sqlite", loader=True, loader_launches=launches)
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps()
    assert steps.method == "marker"
    assert steps.frame["step"].to_list() == [1, 2, 3, 4, 5, 6]
    assert steps.frame["kernels"].to_list() == [3] * 6  # the main thread's 3 kernels each
    assert steps.outside.left_ranges == 6 and steps.outside.left_threads == 1
    assert steps.outside.left_launches == (6 if launches else 0)
    assert "6 matching ranges of 1 other thread" in steps.detail
    assert set(steps.ranges["global_tid"].to_list()) == {steps.ranges["global_tid"][0]}


def test_a_loader_thread_left_out_under_range_glob_too(tmp_path, capsys):
    path = build(tmp_path / "t.sqlite", loader=True, loader_launches=True)
    rc, out, err = run_cli(["steps", str(path), "--range", "step *", "-f", "json", "--no-cache"],
                           capsys)  # fmt: skip
    assert rc == 0, err
    doc = json.loads(out)
    assert [s["step"] for s in doc["steps"]] == [1, 2, 3, 4, 5, 6]
    assert doc["outside"]["left_ranges"] == 6
    assert doc["detail"].startswith("6 steps from 6 NVTX ranges labelled 'step *'")


def test_launches_before_the_first_and_after_the_last_range_are_counted(tmp_path, capsys):
    path = build(tmp_path / "t.sqlite", before=5, after=4)
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps()
    assert steps.count == 6
    assert (steps.outside.before, steps.outside.between, steps.outside.after) == (5, 0, 4)
    assert steps.detail.endswith(
        "; 5 launches before step 1's range, 4 after the last step: in no step"
    ), steps.detail
    rc, out, err = run_cli(["steps", str(path), "-f", "json", "--no-cache"], capsys)
    assert rc == 0, err
    assert json.loads(out)["outside"] == {
        "before": 5, "between": 0, "after": 4, "left_ranges": 0, "left_threads": 0,
        "left_launches": 0,
    }  # fmt: skip
    # nothing outside: nothing said
    with tracelens.open(build(tmp_path / "full.sqlite"), cache=False) as trace:
        full = trace.steps()
    assert full.outside == tracelens.steps.Outside() and "in no step" not in full.detail


def test_the_outside_counts_are_kept_with_the_steps(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACELENS_CACHE_DIR", str(tmp_path / "cache"))
    path = build(tmp_path / "t.sqlite", before=5, after=4, loader=True)
    with tracelens.open(path, cache=True) as trace:
        first = trace.steps()
    with tracelens.open(path, cache=True) as trace:
        again = trace.steps()
    assert first.outside == again.outside and again.outside.before == 5
    assert again.outside.left_ranges == 6


def test_period_steps_count_the_launches_before_and_after_them(tmp_path):
    path = build(tmp_path / "t.sqlite", steps=12, before=2, after=1, ranges=False)
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps()
    assert steps.method == "period", steps.detail
    assert (steps.outside.before, steps.outside.after) == (2, 1), steps.detail


def test_the_words_name_what_is_counted_first():
    from tracelens.steps_outside import Outside

    assert Outside().words() == ""
    assert Outside(between=3, after=4).words() == (
        "; 3 launches between steps, 4 after the last step: in no step"
    )
    assert Outside(before=1).words() == "; 1 launch before step 1's range: in no step"
    two = Outside(left_ranges=4, left_threads=2, left_launches=1).words()
    assert two.startswith("; 4 matching ranges of 2 other threads, ")
    assert "which launched 1 GPU operation in them (in no step), left out" in two


def test_a_thread_driving_its_own_gpu_keeps_its_steps(tmp_path, capsys):
    """One process, a training loop per GPU on threads of its own: each loop's steps are
    kept, on its device (step N of each thread is step N, as the ranks of a multi-process
    job share them); nothing is left out. The busier thread alone was kept before (the
    second GPU's work was in no step)."""
    path = build(tmp_path / "t.sqlite", second_loop=True)
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps()
    frame = steps.frame.sort("step", "device")
    assert frame["step"].to_list() == [s for s in range(1, 7) for _ in (0, 1)]
    assert frame["device"].to_list() == [0, 1] * 6
    assert frame["kernels"].to_list() == [3, 2] * 6  # each thread's own kernels
    assert steps.outside == tracelens.steps.Outside()
    assert len(set(steps.ranges["global_tid"].to_list())) == 2
    rc, out, err = run_cli(["steps", str(path), "-f", "json", "--no-cache"], capsys)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["outside"]["left_ranges"] == 0
    assert sorted({(s["step"], s["device"]) for s in doc["steps"]}) == [
        (s, d) for s in range(1, 7) for d in (0, 1)
    ]


@pytest.mark.parametrize("device", [0, 1], ids=["same_gpu", "other_gpu"])
def test_a_loader_is_left_out_only_when_it_shares_the_loops_gpu(tmp_path, device):
    """A prefetching thread whose copies go to the loop's GPU is the loop's helper: its
    ranges are left out. One whose copies go to a GPU the loop never touches drives that
    GPU on its own: its ranges are that GPU's steps."""
    path = build(tmp_path / "t.sqlite", loader=True, loader_launches=True, loader_device=device)
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps()
    devices = sorted(set(steps.frame["device"].to_list()))
    if device == 0:
        assert devices == [0] and steps.outside.left_ranges == 6
        assert steps.detail.endswith(
            "left out: on each GPU, a process's steps are those of its thread whose ranges "
            "launched the most there"
        ), steps.detail
    else:
        assert devices == [0, 1] and steps.outside.left_ranges == 0
        assert steps.frame.filter(device=1)["kernels"].to_list() == [0] * 6  # copies only
