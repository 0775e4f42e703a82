"""The steps of some of the work are the trace's steps restricted to it, however asked:
`tracelens steps --start/--end` (as --device/--pid/--stream already were), the library's
`trace.steps(pid=..., start=...)`, and the steps figures of `util` and `diff` with filters
(tracelens.steps_within.restrict). Each was a search inside the filtered work, whose own
period or ranges became steps numbered from 1: a window from the trace's step 3 on called
it step 1 and found a period of 3 kernels in it (no copy), and process 200's iterations
were steps 1 to 6 in Python and steps 7 to 12 on the command line. The steps figures
also carry the level shift (`level_shift`, `level_shift_ratio`), as the diff's did.

Fixtures, expected values from what was put in them:
- period (tests/test_stepwork_nvtx.py): 8 steps from the launch period, step s from
  1 ms + s ms: a_k (50-250 us in), b_k (350-550 us), c_k (650 us, lasting s x 10 us); a
  copy 900-910 us in, in even steps. The window 3.90-7.20 ms holds step 2's copy alone
  (3.90-3.91 ms), steps 3 to 5 whole and step 6's a_k (7.05-7.25 ms).
- shared (tests/test_step_filters.py): processes 100 and 200 on device 0, 6 iterations
  each: process 100's are the trace's steps 1 to 6, process 200's steps 7 to 12.
- shifted (tests/test_steps_pacing.py): 12 steps of 115 us, then 12 of 215 us.
"""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from test_step_filters import build_shared
from test_steps_pacing import write_steps
from test_stepwork_nvtx import PID, build_nested, build_period

import tracelens
from tracelens.util import figures

WINDOW = {"start": "3.9ms", "end": "7.2ms"}
WINDOW_ARGS = ["--start", "3.9ms", "--end", "7.2ms"]
RESTRICTION = (
    "; restricted to the window 3.90 ms–7.20 ms: each step's GPU work there (steps 2, 6 only "
    "in part; steps 1, 7, 8 hold none, left out)"
)


@pytest.fixture(scope="module")
def period(tmp_path_factory):
    return str(build_period(tmp_path_factory.mktemp("restricted") / "period.sqlite"))


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    return build_shared(tmp_path_factory.mktemp("restricted") / "shared.sqlite")


def _rows(frame) -> list[tuple]:
    return frame.select("step", "start_ns", "end_ns", "kernels").rows()


def test_a_window_keeps_the_traces_step_numbers(period, capsys):
    """Fails on the old code: steps 1 to 3 of a search inside the window (the trace's
    steps 3 to 5)."""
    with tracelens.open(period) as trace:
        whole = trace.steps()
        windowed = trace.steps(**WINDOW)
    assert windowed.detail == whole.detail + RESTRICTION
    by_step = {row[0]: row for row in _rows(whole.frame)}
    assert _rows(windowed.frame) == [
        (2, 3_900_000, 3_910_000, 0),  # its copy alone
        by_step[3],
        by_step[4],
        by_step[5],
        (6, 7_050_000, 7_250_000, 1),  # its a_k alone
    ]
    rc, out, err = run_cli(["steps", period, "--no-cache", *WINDOW_ARGS], capsys)
    assert (rc, err) == (0, "")
    assert "steady state (5 steps)" in out
    # top kernels: steps 3 to 6 hold kernels, all listed (not 'the first 4 steps of 5')
    assert "the 3 kernels with the most time per step and device\n" in out
    rc, out, _ = run_cli(["steps", period, "--no-cache", *WINDOW_ARGS, "-f", "csv"], capsys)
    assert [line.split(",")[0] for line in out.splitlines()[1:]] == ["2", "3", "4", "5", "6"]


@pytest.mark.parametrize("kind", ["period", "nvtx"])
def test_a_window_is_read_in_the_scan_of_the_steps_work(period, tmp_path, monkeypatch, kind):
    """The steps' work is read with the window as bound parameters of its one pass
    (steps_window_work / steps_range_work, whose goldens in
    tests/queries/test_step_selection_queries.py show them keep only the work that passes
    it), not read whole and cut afterwards: before, a window over a few steps of a 5M-kernel
    trace read every operation of the steps it met. The rows are the same either way."""
    from tracelens import stepwork

    path = period if kind == "period" else str(build_nested(tmp_path / "nested.sqlite"))
    asked = []
    step_work = stepwork._step_work

    def spy(*args, **kwargs):
        query, bounds, params = step_work(*args, **kwargs)
        asked.append((query, params["start_ns"], params["end_ns"]))
        return query, bounds, params

    monkeypatch.setattr(stepwork, "_step_work", spy)
    with tracelens.open(path, cache=False) as trace:
        windowed = trace.steps(**WINDOW)
    query = "steps_window_work" if kind == "period" else "steps_range_work"
    assert windowed.count and asked == [(query, 3_900_000, 7_200_000)]


def test_a_window_outside_every_step_holds_none(period, capsys):
    rc, out, err = run_cli(["steps", period, "--no-cache", "--start", "30ms"], capsys)
    assert (rc, err) == (0, "")
    assert out.endswith(
        "; restricted to the window from 30.00 ms: none of them holds GPU work there\n"
    )


def test_a_process_in_python_is_the_clis(shared, capsys):
    """Fails on the old code: trace.steps(pid=200) searched process 200's launches alone,
    its iterations numbered 1 to 6."""
    with tracelens.open(shared) as trace:
        mine = trace.steps(pid=200)
        assert trace.steps().count == 12
    assert mine.frame["step"].to_list() == [7, 8, 9, 10, 11, 12]
    assert mine.detail.endswith(
        "; restricted to process 200: each step's GPU work there (steps 1, 2, 3, 4, 5, 6 hold "
        "none, left out)"
    )
    rc, out, _ = run_cli(["steps", shared, "--no-cache", "--pid", "200", "-f", "json"], capsys)
    assert rc == 0
    doc = json.loads(out)
    assert [(s["step"], s["start_ns"], s["end_ns"]) for s in doc["steps"]] == (
        mine.frame.select("step", "start_ns", "end_ns").rows()
    )


def test_util_and_diff_figures_with_a_window_are_the_restricted_steps(period, capsys):
    """Fails on the old code: 3 steps (the window's own period), for util and both sides
    of the diff."""
    with tracelens.open(period) as trace:
        assert figures(trace, trace.filter(**WINDOW))["steps"] == 5
        assert trace.steps(**WINDOW).figures()["steps"] == 5
    gates = ["--fail-if", "steps!=5", "--fail-if", "steps_a!=5"]
    rc, _, err = run_cli(["util", period, "--no-cache", *WINDOW_ARGS, *gates[:2]], capsys)
    assert (rc, err) == (0, "")
    sides = ["--a-start", "3.9ms", "--a-end", "7.2ms", "--b-start", "3.9ms", "--b-end", "7.2ms"]
    rc, _, err = run_cli(["diff", period, period, "--no-cache", *sides, *gates], capsys)
    assert (rc, err) == (0, "")


def test_the_level_shift_is_a_steps_and_util_figure(tmp_path, capsys):
    """Fails on the old code: `unknown figure 'level_shift_ratio'` (exit 2)."""
    path = write_steps(tmp_path / "shifted.sqlite", [1] * 12 + [2] * 12)
    with tracelens.open(path) as trace:
        found = trace.steps().figures()
    assert found["level_shift"] == 13.0
    assert found["level_shift_ratio"] == pytest.approx(215 / 115)
    rc, _, err = run_cli(["steps", path, "--fail-if", "level_shift_ratio>1.5"], capsys)
    assert rc == 1
    assert err == "tracelens: gate tripped: level_shift_ratio>1.5 (level_shift_ratio = 1.87)\n"
    rc, _, err = run_cli(["util", path, "--fail-if", "level_shift==13"], capsys)
    assert (rc, err) == (1, "tracelens: gate tripped: level_shift==13 (level_shift = 13)\n")
    steady = write_steps(tmp_path / "steady.sqlite", [1] * 24)
    rc, _, err = run_cli(["steps", steady, "--fail-if", "level_shift>0"], capsys)
    assert (rc, err) == (0, "")


@pytest.mark.parametrize("kind", ["period", "nvtx"])
@pytest.mark.parametrize(
    "where",
    [
        dict(start_ns=3_900_000, end_ns=7_200_000),
        dict(start_ns=3_900_000, end_ns=7_200_000, pid=PID),
        dict(start_ns=2_500_000),
    ],
    ids=["window", "window_pid", "from"],
)
def test_restricted_top_kernels_are_the_querys(period, tmp_path, kind, where):
    """restrict ranks the top kernels from the rows it recounts the steps from
    (steps_passing_work); they are the rows steps_top_kernels gives over the same step
    work, which read every kernel again."""
    from fixtures.step_work_top import top_kernels_over_step_work

    from tracelens import _resources
    from tracelens.filters import EventFilter
    from tracelens.steps_within import _candidates, restrict
    from tracelens.stepwork import _registered, _step_work

    path = period if kind == "period" else str(build_nested(tmp_path / "nested.sqlite"))
    filters = EventFilter(**where)
    with tracelens.open(path, cache=False) as trace:
        found = trace.steps()
        top = restrict(trace, found, filters, top_kernels=2).top_kernels
        steps = _candidates(found, filters)
        query, bounds, params = _step_work(found, steps[0], steps[-1], filters, window=True)
        with _registered(trace, bounds.filter(bounds["step"].is_in(steps))):
            trace.db.execute("CREATE TEMP TABLE step_work AS " + _resources.query(query), params)
        expected = top_kernels_over_step_work(trace, 2, **filters.params())
    assert top is not None and top.height
    assert top.rows() == expected.rows()
