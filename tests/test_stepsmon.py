"""Period steps of a GPU two processes share: one runs the program's loop (no NVTX, most of
the GPU time), the other a monitor that polls with tiny kernels of a period of its own and
launches 3 times as many. The process whose steps held the most launches was the loop, so
the steps were the monitor's 30 polls and the loop's work was in no step ('which run no
such loop'). The loop whose steps hold the most GPU time is the steps, the monitor's loop
named as passed over (``[period] other_process_loop_over`` in data/steps.toml); a monitor
whose steps hold more GPU time than the loop's stays the steps."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from fixtures.builder import FILL, NCCL_SENDRECV, REDUCE_SUM, XMMA_GEMM
from test_advutil_steps import LOOP, OTHER, STEP, launch

import tracelens
from tracelens.synth import TraceBuilder

POLL = 3_300  # ns from one poll's first launch to the next's


def build(path, *, poll_ns: int):
    """LOOP: 10 iterations of a 5 µs GEMM and a 1 µs fill, one every 10 µs (60 µs of GPU
    time in 20 launches); OTHER, the monitor: 30 polls of a SendRecv and a reduction of
    ``poll_ns`` each, one every 3.3 µs (60 launches)."""
    b = TraceBuilder("3.0.0")
    b.process(LOOP, "python train.py")
    b.process(OTHER, "python monitor.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    for i in range(10):
        t = 10_000 + i * STEP
        launch(b, LOOP, t - 100, XMMA_GEMM, t, t + 5_000, 7)
        launch(b, LOOP, t - 90, FILL, t + 5_000, t + 6_000, 7)
    for i in range(30):
        t = 10_300 + i * POLL
        launch(b, OTHER, t - 100, NCCL_SENDRECV, t, t + poll_ns, 9)
        launch(b, OTHER, t - 90, REDUCE_SUM, t + poll_ns, t + 2 * poll_ns, 9)
    return b.write(path)


@pytest.fixture(scope="module")
def monitored(tmp_path_factory):
    """The monitor's 60 launches hold 12 µs of GPU time: 17%, the loop's 83%."""
    return build(tmp_path_factory.mktemp("stepsmon") / "monitored.sqlite", poll_ns=200)


LOOP_STEPS = [(i + 1, 10_000 + i * STEP, 16_000 + i * STEP, 2) for i in range(10)]


def test_the_loop_with_most_of_the_gpu_time_is_the_steps(monitored):
    with tracelens.open(monitored, cache=False) as trace:
        steps = trace.steps()
    assert (steps.method, steps.count) == ("period", 10), steps.detail
    assert steps.detail == (
        "10 steps from the period of the kernel launch sequence (device 0: a motif of 2 "
        "kernels (the 60 launches of 1 other process on it in no step)); not in the steps: "
        "the loop of process 5555 on device 0, another program's (a motif of 2 kernels, "
        "none of them the steps', in 30 steps holding 12.00 µs of GPU time, less than the "
        "steps' 60.00 µs there)"
    )
    assert steps.frame.select("step", "start_ns", "end_ns", "kernels").rows() == LOOP_STEPS
    assert steps.processes == {0: (LOOP,)}


@pytest.mark.parametrize(
    ("poll_ns", "held", "than"),
    [(1_500, "90.00", "less than"), (1_000, "60.00", "not more than")],
    ids=["the monitor does more", "as much"],
)
def test_a_monitor_with_more_gpu_time_stays_the_steps(tmp_path, poll_ns, held, than):
    """The monitor's polls hold 90 µs of GPU time, more than the loop's 60: the monitor's
    loop is the steps. Holding as much (60 µs), it is not more than
    ``other_process_loop_over`` (1.0) times the loop's: the loop with the most launches
    stays the steps, as before."""
    with tracelens.open(build(tmp_path / "t.sqlite", poll_ns=poll_ns), cache=False) as trace:
        steps = trace.steps()
    assert (steps.method, steps.count) == ("period", 30), steps.detail
    assert steps.detail == (
        "30 steps from the period of the kernel launch sequence (device 0: a motif of 2 "
        "kernels (the 20 launches of 1 other process on it in no step)); not in the steps: "
        "the loop of process 4242 on device 0, another program's (a motif of 2 kernels, "
        f"none of them the steps', in 10 steps holding 60.00 µs of GPU time, {than} the "
        f"steps' {held} µs there)"
    )
    assert steps.processes == {0: (OTHER,)}


def test_the_rule_is_the_settings(monitored, monkeypatch):
    """``other_process_loop_over`` is read from data/steps.toml: at 6 (the loop's 60 µs
    is not more than 6 times the monitor's 12) the monitor, which launched more, is the
    steps."""
    import tracelens.steps as steps_module

    conf = steps_module.settings()
    period = {**conf["period"], "other_process_loop_over": 6.0}
    monkeypatch.setattr(steps_module, "settings", lambda: {**conf, "period": period})
    with tracelens.open(monitored, cache=False) as trace:
        steps = trace.steps()
    assert (steps.count, steps.processes) == (30, {0: (OTHER,)}), steps.detail
    assert steps.detail.endswith(
        "in 10 steps holding 60.00 µs of GPU time, not more than 6 times the steps' 12.00 µs there)"
    )


def test_util_of_a_step_is_the_loops_work(monitored, capsys):
    """util --step 2 selects the loop's step 2 (its GEMM and fill), not a poll."""
    rc, out, err = run_cli(["util", monitored, "--step", "2", "-f", "csv"], capsys)
    assert (rc, err) == (
        0,
        "tracelens: note: only the GPU work of step 2 of 10 (steps from the period of the "
        "kernel launch sequence (device 0: a motif of 2 kernels))\n",
    )
    header, row = out.splitlines()
    got = dict(zip(header.split(","), row.split(","), strict=True))
    assert {k: got[k] for k in ("span_ns", "busy_ns", "communication_ns")} == {
        "span_ns": "6000",
        "busy_ns": "6000",
        "communication_ns": "0",
    }


@pytest.mark.parametrize(
    "first",
    [
        ["diff", "{t}", "{t}", "-f", "json"],
        ["report", "{t}", "-o", "{dir}/page.html"],
        ["fingerprint", "{t}", "-o", "{dir}/fp.json"],
    ],
    ids=["diff", "report", "fingerprint"],
)
def test_every_command_finds_the_same_steps(monitored, tmp_path, capsys, cache_dir, first):
    """The diff, the report and the fingerprint hand the search their own read of the
    launches; the steps they keep in the cache entry are `steps`' own."""

    def steps(*cache):
        args = ["steps", monitored, "-f", "json", "--kernels", "0", *cache]
        code, out, err = run_cli(args, capsys)
        assert code == 0, err
        doc = json.loads(out)
        return doc["detail"], [(s["step"], s["start_ns"], s["end_ns"]) for s in doc["steps"]]

    direct = steps("--no-cache")
    assert direct[0].startswith("10 steps from the period of the kernel launch sequence")
    assert direct[1] == [row[:3] for row in LOOP_STEPS]
    code, _, err = run_cli([a.format(t=monitored, dir=tmp_path) for a in first], capsys)
    assert code == 0, err
    assert steps() == direct
