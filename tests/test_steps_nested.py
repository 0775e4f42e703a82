"""Step ranges that nest with their own label (PyTorch can open ProfilerStep#N twice, one
inside the other) are one step each: before, every matching range was numbered, each call
went to the inner range, the outer ranges were left empty and dropped, so the steps read
2, 4, ..., 16 "of 7" and --steps 1:7 selected the work of three steps. And the notes say
which steps exist: a step number that held no GPU work is named, never "step 8 of 7".
Expected values come from the fixture."""

from __future__ import annotations

import re

import pytest
from conftest import run_cli

import tracelens
from tracelens.errors import UsageError
from tracelens.synth import TraceBuilder

US = 1_000
# Launches per ProfilerStep#N (step 3 does CPU work only), three kernel names in turn.
COUNTS = [4, 6, 0, 5, 4, 7, 4, 4]


def build(path, *, nested: bool):
    b = TraceBuilder("3.25.0")
    b.process(100, "python s.py")
    b.gpu(0)
    t = 1_000 * US
    for s, n in enumerate(COUNTS, start=1):
        s0 = t
        for i in range(n):
            t += 1 * US
            c = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 2 * US)
            b.kernel(f"k{i % 3}(int)", start=t + 5 * US, end=t + 25 * US, correlation_id=c)
            t += 30 * US
        t += (100 * US if n == 0 else 0) + 5 * US
        b.nvtx_range(f"ProfilerStep#{s}", start=s0, end=t)
        if nested:
            b.nvtx_range(f"ProfilerStep#{s}", start=s0 + 1 * US, end=t - 2 * US)
        t += 20 * US
    b.write(path)
    return path


@pytest.fixture(scope="module", params=[True, False], ids=["nested", "flat"])
def trace_path(request, tmp_path_factory):
    return build(tmp_path_factory.mktemp("nested") / "steps.sqlite", nested=request.param)


def test_nested_same_label_ranges_are_one_step_each(trace_path):
    with tracelens.open(trace_path) as trace:
        s = trace.steps()
        census = trace.census
        assert s.method == "marker" and s.detail.startswith("7 steps from 8 NVTX ranges")
        assert s.frame["step"].to_list() == [1, 2, 4, 5, 6, 7, 8]
        assert s.frame["kernels"].to_list() == [n for n in COUNTS if n]
        # --steps 1:7: the launches of ProfilerStep#1..#7; --step 2: ProfilerStep#2's
        assert census(steps="1:7")["instances"].sum() == sum(COUNTS[:7]) == 30
        assert census(step=2)["instances"].sum() == 6
        assert census(step=8)["instances"].sum() == 4
        with pytest.raises(UsageError, match="step 3 launched no GPU work"):
            census(step=3)


def test_the_notes_say_which_steps_hold_no_work(trace_path, capsys):
    rc, _, err = run_cli(["census", str(trace_path), "--step", "8", "-f", "csv"], capsys)
    assert rc == 0
    assert err.startswith(
        "tracelens: note: only the GPU work of step 8 of 8 (step 3 held no GPU work; steps "
        "from 8 NVTX ranges 'ProfilerStep#*' (step markers))"
    )
    rc, _, err = run_cli(["census", str(trace_path), "--per-step", "-f", "csv"], capsys)
    assert rc == 0
    assert "per step: the GPU work of steps 1 to 8 of 8, divided by 7 (step 3 held no" in err
    rc, _, err = run_cli(
        ["census", str(trace_path), "--step", "2", "--device", "0", "-f", "csv"], capsys
    )
    assert "step 2 of 8 (step 3 held no GPU work that passes the filters; steps" in err


def test_step_zero_is_about_step(trace_path, capsys):
    rc, out, err = run_cli(["census", str(trace_path), "--step", "0"], capsys)
    assert (rc, out) == (2, "")
    assert err == "tracelens: step (--step or --steps) '0': step numbers start at 1\n"
    with tracelens.open(trace_path) as trace, pytest.raises(UsageError) as exc:
        trace.census(step=0)
    assert str(exc.value) == "step 0: step numbers start at 1"
    rc, out, err = run_cli(["census", str(trace_path), "--steps", "0:2"], capsys)
    assert err == "tracelens: steps (--step or --steps) '0:2': need 1 <= A <= B\n"


def test_the_reports_detail_window_counts_steps_to_the_last_number(trace_path):
    """The report's detail window names its step "of N" with N the last step number, as the
    selection notes do: step 3 held no GPU work, so the steps are 1 to 8, not "of 7"."""
    from tracelens.report import build_report

    with tracelens.open(trace_path) as trace:
        page = build_report(trace)
    assert re.search(r"step \d of 8[ ,]", page)
    assert not re.search(r"step \d of 7[ ,]", page)
