"""--step N / --steps A:B with --start/--end: the trace's step N (the number `tracelens steps`
prints), intersected with the window. The steps are found on the whole trace, not inside
the window, where the steps it holds would be numbered from 1; a step whose GPU span lies
outside the window is one line naming both, exit 2; a window that cuts a step keeps the
step's work in the window (as an event passes a window: it ends at or after its start and
starts before its end)
and the note says the step is held only in part.

Fixtures from test_stepwork_nvtx, expected values from what was put in them:
- period: 8 steps from the launch period, step s from 1 ms + s ms: a_k (50-250 us in),
  b_k (350-550 us), c_k (650 us, lasting s x 10 us); a copy in even steps.
- nested: 6 'train_step' NVTX ranges, step s from s ms, its attention kernel 220-270 us in.
"""

from __future__ import annotations

import pytest
from conftest import run_cli
from test_stepwork_nvtx import C_NS, build_nested, build_period

import tracelens
from tracelens.errors import UsageError
from tracelens.stepwork import select_steps
from tracelens.synth import TraceBuilder

MS = 1_000_000
A, B, C = "void a_k(float*)", "void b_k(float*)", "void c_k(float*)"


def _period_step(s: int) -> int:
    """Where period step s's host work begins (its GPU work starts 50 us later)."""
    return MS + s * MS


@pytest.fixture(scope="module")
def period(tmp_path_factory):
    return str(build_period(tmp_path_factory.mktemp("stepwin") / "period.sqlite"))


@pytest.fixture(scope="module")
def nested(tmp_path_factory):
    return str(build_nested(tmp_path_factory.mktemp("stepwin") / "nested.sqlite"))


def _kernels(census) -> dict[str, int]:
    return dict(zip(census["name"].to_list(), census["total_ns"].to_list(), strict=True))


def test_a_window_does_not_renumber_period_steps(period):
    """Fails on the old code: inside the window from step 3 on, step 4 was the window's
    4th step, the trace's step 6 (c_k of 60 us)."""
    with tracelens.open(period) as trace:
        assert trace.steps().count == 8
        window = {"start": _period_step(3) - 100_000, "end": _period_step(9)}
        for step in (3, 4, 8):
            assert _kernels(trace.census(step=step, **window))[C] == C_NS * step
        chosen = select_steps(trace, "4", trace.filter(**window))
    assert (chosen.first, chosen.selected, chosen.steps.count, chosen.window) == (4, 1, 8, None)
    assert chosen.note().startswith("only the GPU work of step 4 of 8 (steps from the period")


def test_a_window_does_not_renumber_nvtx_steps(nested):
    with tracelens.open(nested) as trace:
        assert trace.steps().count == 6
        whole = trace.census(step=5)
        windowed = trace.census(step=5, start=3 * MS + 500_000, end=7 * MS)
        assert trace.util(step=5, start=3 * MS + 500_000).frame["span_ns"].to_list() == (
            trace.util(step=5).frame["span_ns"].to_list()
        )
    assert windowed.equals(whole)


def test_the_steps_are_searched_on_the_whole_trace(period, monkeypatch):
    """So a window or a filter costs no step search of its own: the kept steps of
    `tracelens steps` serve (find_steps keeps and reads back only the whole trace's
    steps)."""
    import tracelens.stepwork as stepwork

    searched = []
    search = stepwork.find_steps

    def spy(trace, range=None, where=None, **options):  # noqa: A002
        searched.append(where)
        return search(trace, range=range, where=where, **options)

    monkeypatch.setattr(stepwork, "find_steps", spy)
    with tracelens.open(period) as trace:
        select_steps(trace, 4, trace.filter(device=0, pid=100, stream=7, start="3.9ms"))
    assert searched and all(where is None or where.is_whole() for where in searched)


def test_a_step_outside_the_window_is_an_error(period, nested, capsys):
    with tracelens.open(period) as trace, pytest.raises(UsageError) as caught:
        trace.census(step=2, start=_period_step(4), end=_period_step(6))
    assert str(caught.value) == (
        f"{period}: step 2 is outside the window 5.00 ms–7.00 ms: its GPU work runs "
        "3.05 ms–3.91 ms from session start"
    )
    with tracelens.open(nested) as trace, pytest.raises(UsageError) as caught:
        trace.census(steps="1:2", start=4 * MS)
    assert str(caught.value).startswith(
        f"{nested}: steps 1 to 2 are outside the window from 4.00 ms: their GPU work runs"
    )
    rc, out, err = run_cli(["census", period, "--no-cache", "--end", "2ms", "--step", "3"], capsys)
    assert (rc, out) == (2, "")
    assert err == (
        f"tracelens: {period}: step 3 is outside the window until 2.00 ms: its GPU work "
        "runs 4.05 ms–4.68 ms from session start\n"
    )


def test_a_window_that_cuts_a_step_keeps_its_work_inside(period):
    """Step 4's a_k ends at 5.25 ms: a window from 5.30 ms keeps b_k and c_k, one until
    5.30 ms keeps a_k alone; the note says the window holds the step only in part."""
    late, early = {"start": "5.3ms"}, {"end": "5.3ms"}
    with tracelens.open(period) as trace:
        assert set(_kernels(trace.census(step=4, **late))) == {B, C}
        assert set(_kernels(trace.census(step=4, **early))) == {A}
        cut = select_steps(trace, 4, trace.filter(**late))
        util = trace.util(step=4, **late).frame.row(0, named=True)
    assert cut.note().startswith(
        "only the GPU work of step 4 of 8 within the window from 5.30 ms, which holds step 4 "
        "only in part (steps from the period"
    )
    assert cut.where.start_ns == 5_300_000 and util["span_ns"] == cut.where.end_ns - 5_300_000


def test_a_window_over_part_of_a_range_of_steps(period, capsys):
    """--steps 2:7 with a window over steps 3 to 5 (cutting 5): 3 steps, per step too."""
    window = ["--start", "3.95ms", "--end", "6.3ms"]
    with tracelens.open(period) as trace:
        chosen = select_steps(trace, "2:7", trace.filter(start="3.95ms", end="6.3ms"))
        kernels = _kernels(trace.census(steps="2:7", start="3.95ms", end="6.3ms"))
    assert chosen.selected == 3 and chosen.window.held == (3, 4, 5)
    assert chosen.window.part == (5,)
    assert kernels[C] == C_NS * (3 + 4) and kernels[A] == 3 * 200_000
    rc, out, err = run_cli(
        ["census", period, "--no-cache", *window, "--steps", "2:7", "--per-step"], capsys
    )
    assert rc == 0, err
    assert (
        "per step: the GPU work of steps 2 to 7 of 8 within the window 3.95 ms–6.30 ms, "
        "which holds steps 3, 4 whole and step 5 only in part, divided by 3 (steps from"
    ) in out


@pytest.mark.parametrize(
    "command",
    [
        ["census"],
        ["census", "--per-step"],
        ["lineup"],
        ["memory"],
        ["danger"],
        ["stakeout", "c_k"],
        ["timeline"],
        ["util"],
        ["findings"],
    ],
)
def test_every_command_takes_the_traces_step_in_a_window(period, capsys, command):
    args = [command[0], period, *command[1:], "--no-cache", "--start", "3.9ms"]
    rc, out, err = run_cli([*args, "--step", "4", "-f", "json"], capsys)
    assert rc == 0, err
    assert "the GPU work of step 4 of 8" in err and "steps from the period" in err
    rc, out, err = run_cli([*args, "--step", "1"], capsys)
    assert (rc, out) == (2, "")
    assert err.endswith("step 1 is outside the window from 3.90 ms: its GPU work runs "
                        "2.05 ms–2.66 ms from session start\n") and err.count("\n") == 1  # fmt: skip


def test_diff_takes_each_sides_step_in_its_window(period, capsys):
    rc, out, err = run_cli(
        ["diff", period, period, "--no-cache", "--a-start", "3.9ms", "--step", "4", "-f", "json"],
        capsys,
    )
    assert rc == 0, err
    assert "A: only the GPU work of step 4 of 8 (steps" in out
    rc, out, err = run_cli(
        ["diff", period, period, "--no-cache", "--b-end", "3ms", "--step", "4"], capsys
    )
    assert (rc, out) == (2, "")
    assert "step 4 is outside the window until 3.00 ms" in err and err.count("\n") == 1


def test_nvtx_window_and_step_intersect(period):
    """--nvtx ckpt (c_k and the copy of even steps) with a window from step 3 on: step 4 is
    the trace's step 4; step 2 is outside the window, step 3 holds none of ckpt's work."""
    window = {"start": "3.95ms", "nvtx": "ckpt"}
    with tracelens.open(period) as trace:
        assert _kernels(trace.census(step=4, **window)) == {C: C_NS * 4}
        assert _kernels(trace.census(steps="2:4", **window)) == {C: C_NS * 4}
        with pytest.raises(UsageError, match="step 2 is outside the window from 3.95 ms"):
            trace.census(step=2, **window)
        with pytest.raises(UsageError, match="none of the GPU work of step 3 is in the rest"):
            trace.census(step=3, **window)


def build_two_devices(path):
    """One process, 6 iterations from the launch period of each device: iteration s from
    s ms runs a_k 50-250 us in and b_k 450-550 us in on device 0, x_k 600-700 us and y_k
    710-810 us in on device 1 (the steps table: step s on both devices)."""
    b = TraceBuilder("3.25.0")
    b.process(100, "python t.py")
    b.gpu(0)
    b.gpu(1)
    for s in range(1, 7):
        t = s * MS
        for name, at, start, duration, device in (
            ("a_k", 0, 50, 200, 0),
            ("b_k", 400, 450, 100, 0),
            ("x_k", 10, 600, 100, 1),
            ("y_k", 20, 710, 100, 1),
        ):
            cid = b.runtime("cudaLaunchKernel_v7000", start=t + at * 1_000,
                            end=t + at * 1_000 + 3_000, pid=100)  # fmt: skip
            b.kernel(f"void {name}(float*)", start=t + start * 1_000,
                     end=t + (start + duration) * 1_000, device=device, pid=100,
                     correlation_id=cid)  # fmt: skip
    return str(b.write(path))


@pytest.fixture(scope="module")
def two_devices(tmp_path_factory):
    return build_two_devices(tmp_path_factory.mktemp("stepwin") / "two_devices.sqlite")


def test_a_window_between_a_steps_devices_is_outside_it(two_devices, capsys):
    """Step 3 runs until 3.55 ms on device 0 and from 3.60 ms on device 1: its span over both
    meets a window 3.56-3.58 ms, which holds none of its work. Fails on the old code: the
    step passed the check and every command printed an empty selection."""
    with tracelens.open(two_devices) as trace:
        assert trace.steps().count == 6
        with pytest.raises(UsageError) as caught:
            trace.census(step=3, start="3.56ms", end="3.58ms")
    assert str(caught.value) == (
        f"{two_devices}: step 3 is outside the window 3.56 ms–3.58 ms: its GPU work runs "
        "3.05 ms–3.55 ms on device 0 and 3.60 ms–3.81 ms on device 1 from session start"
    )
    rc, out, err = run_cli(
        ["util", two_devices, "--no-cache", "--start", "3.56ms", "--end", "3.58ms", "--step", "3"],
        capsys,
    )
    assert (rc, out) == (2, "") and err.count("\n") == 1 and "is outside the window" in err


def test_a_window_in_a_steps_idle_time_holds_none_of_its_work(two_devices, capsys):
    """Device 0 idles 3.25-3.45 ms inside step 3 and device 1 starts at 3.60 ms: a window
    3.30-3.40 ms meets the step's span on device 0 and holds none of its work. Fails on the
    old code (an empty selection)."""
    with tracelens.open(two_devices) as trace, pytest.raises(UsageError) as caught:
        trace.census(step=3, start="3.3ms", end="3.4ms")
    assert str(caught.value) == (
        f"{two_devices}: step 3 has no GPU work in the window 3.30 ms–3.40 ms: its GPU work "
        "runs 3.05 ms–3.55 ms on device 0 and 3.60 ms–3.81 ms on device 1 from session start"
    )
    rc, out, err = run_cli(
        ["census", two_devices, "--no-cache", "--start", "3.3ms", "--end", "3.4ms",
         "--steps", "3:4"],
        capsys,
    )  # fmt: skip
    assert (rc, out) == (2, "") and err.count("\n") == 1
    assert "steps 3 to 4 have no GPU work in the window 3.30 ms–3.40 ms" in err


def test_a_window_over_one_device_of_a_step_keeps_that_work(two_devices):
    """A window 3.58-3.90 ms holds step 3's work on device 1 only (and none of steps 2 and
    4): one step, in part."""
    with tracelens.open(two_devices) as trace:
        chosen = select_steps(trace, "2:4", trace.filter(start="3.58ms", end="3.9ms"))
        kernels = _kernels(trace.census(steps="2:4", start="3.58ms", end="3.9ms"))
    assert (chosen.selected, chosen.window.held, chosen.window.part) == (1, (3,), (3,))
    assert kernels == {"void x_k(float*)": 100_000, "void y_k(float*)": 100_000}
