"""--device/--pid/--stream with --step N: the trace's step N (the number `tracelens steps`
prints), intersected with the filter. The steps were searched within the filter, where the
filtered work's own period or ranges became the steps, numbered from 1: with two processes
on one GPU, `--pid 200 --step 3` was process 200's 3rd iteration (the trace's step 9), and
`--device 1 --step 3` the 3rd iteration of device 1's own loop, which no step of the trace
holds.

Fixtures, expected values from what was put in them:
- shared: processes 100 (stream 7) and 200 (stream 8) on device 0, 6 iterations each of
  a_k, b_k, c_k, process 200's 400 us after process 100's. The launch period numbers one
  process after the other: process 100's iterations are steps 1 to 6, process 200's steps
  7 to 12. c_k of a process's iteration s lasts s x 10 us (process 200's: 1 us more), and
  its copy moves s x 1,000 bytes (process 200's: 1,000 bytes more).
- side: NVTX 'train_step' ranges of thread 100 launch fwd_k, c_k (iteration s: s x 10 us)
  and a copy on device 0: the trace's 6 steps; thread 101, outside every range, runs a loop of
  side_a and side_b on device 1, which is in no step.
"""

from __future__ import annotations

import pytest
from conftest import run_cli

import tracelens
from tracelens.errors import UsageError
from tracelens.synth import TraceBuilder

US, MS = 1_000, 1_000_000
C_NS = 10_000
COPY_BYTES = 1_000
C = "void c_k(float*)"


def _launch(b, pid, name, t, duration, *, device=0, stream=7, tid=None):
    cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 3 * US, pid=pid, tid=tid)
    b.kernel(name, start=t + 50 * US, end=t + 50 * US + duration, pid=pid, device=device,
             stream=stream, correlation_id=cid)  # fmt: skip


def build_shared(path):
    b = TraceBuilder("3.25.0")
    b.process(100, "python a.py")
    b.process(200, "python b.py")
    b.gpu(0)
    for s in range(1, 7):
        for pid, offset, more, stream in ((100, 0, 0, 7), (200, 400 * US, US, 8)):
            t = MS + s * MS + offset
            _launch(b, pid, "void a_k(float*)", t, 100 * US, stream=stream)
            _launch(b, pid, "void b_k(float*)", t + 110 * US, 100 * US, stream=stream)
            _launch(b, pid, C, t + 220 * US, C_NS * s + more, stream=stream)
            cid = b.runtime("cudaMemcpyAsync_v3020", start=t + 250 * US, end=t + 253 * US, pid=pid)
            b.memcpy("DtoH", COPY_BYTES * s + more, start=t + 350 * US, end=t + 360 * US,
                     pid=pid, stream=stream, correlation_id=cid)  # fmt: skip
    return str(b.write(path))


def build_side(path):
    b = TraceBuilder("3.25.0")
    b.process(100, "python t.py")
    b.thread("side", pid=100, tid=101)
    b.gpu(0)
    b.gpu(1)
    for s in range(1, 7):
        t = s * MS
        b.nvtx_range("train_step", start=t, end=t + 600 * US, pid=100)
        _launch(b, 100, "void fwd_k(float*)", t + 10 * US, 200 * US)
        _launch(b, 100, C, t + 300 * US, C_NS * s)
        cid = b.runtime("cudaMemcpyAsync_v3020", start=t + 350 * US, end=t + 353 * US, pid=100)
        b.memcpy("DtoH", COPY_BYTES * s, start=t + 450 * US, end=t + 460 * US, pid=100,
                 correlation_id=cid)  # fmt: skip
    for s in range(1, 10):
        t = 500 * US + s * 600 * US
        _launch(b, 100, "void side_a(float*)", t, 50 * US, device=1, tid=101)
        _launch(b, 100, "void side_b(float*)", t + 100 * US, 20 * US * s, device=1, tid=101)
    return str(b.write(path))


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    return build_shared(tmp_path_factory.mktemp("stepfilt") / "shared.sqlite")


@pytest.fixture(scope="module")
def side(tmp_path_factory):
    return build_side(tmp_path_factory.mktemp("stepfilt") / "side.sqlite")


def _kernels(census) -> dict[str, int]:
    return dict(zip(census["name"].to_list(), census["total_ns"].to_list(), strict=True))


def test_the_fixtures_steps(shared, side):
    with tracelens.open(shared) as trace:
        steps = trace.steps()
        assert (steps.method, steps.count) == ("period", 12)
        assert _kernels(trace.census(step=3))[C] == 3 * C_NS
        assert _kernels(trace.census(step=9))[C] == 3 * C_NS + US
    with tracelens.open(side) as trace:
        steps = trace.steps()
        assert (steps.method, steps.count) == ("marker", 6)
        assert set(steps.frame["device"].to_list()) == {0}


@pytest.mark.parametrize(("key", "value"), [("pid", 200), ("stream", 8)])
def test_a_process_or_stream_keeps_the_traces_step_numbers(shared, key, value):
    """Fails on the old code: step 3 of process 200 alone was its 3rd iteration."""
    with tracelens.open(shared) as trace:
        assert _kernels(trace.census(step=9, **{key: value}))[C] == 3 * C_NS + US
        util = trace.util(step=9, **{key: value}).frame.row(0, named=True)
        copies = trace.memory_size(step=9, **{key: value})
        with pytest.raises(UsageError) as caught:
            trace.census(step=3, **{key: value})
    assert util["compute_ns"] == 2 * 100 * US + 3 * C_NS + US
    assert copies["total_bytes"].sum() == 3 * COPY_BYTES + 1_000
    assert str(caught.value) == f"{shared}: step 3 launched no GPU work that passes the filters"


def test_the_other_process_keeps_its_steps(shared):
    with tracelens.open(shared) as trace:
        assert _kernels(trace.census(step=3, pid=100))[C] == 3 * C_NS
        assert _kernels(trace.census(steps="2:3", stream=7))[C] == 5 * C_NS


def test_per_step_divides_by_the_steps_that_hold_the_process(shared):
    """Steps 2 to 9 are process 100's 2 to 6 and process 200's 7 to 9: with --pid 200 three
    of them hold its work."""
    with tracelens.open(shared) as trace:
        rows = trace.census(steps="2:9", pid=200, per_step=True)
        c = rows.filter(rows["name"] == C).row(0, named=True)
    assert c["calls_per_step"] == 1.0 and c["per_step_ns"] == (1 + 2 + 3) * C_NS / 3 + US


def test_a_device_keeps_the_traces_step_numbers(side):
    """Fails on the old code: on device 1 alone its loop's period became the steps, and
    step 3 was its 3rd iteration (side_a and side_b)."""
    with tracelens.open(side) as trace:
        assert _kernels(trace.census(step=3, device=0)) == {
            "void fwd_k(float*)": 200 * US,
            C: 3 * C_NS,
        }
        with pytest.raises(UsageError) as caught:
            trace.census(step=3, device=1)
    assert str(caught.value) == f"{side}: step 3 launched no GPU work that passes the filters"


COMMANDS = [
    ["census", "{trace}"],
    ["census", "{trace}", "--per-step"],
    ["lineup", "{trace}"],
    ["memory", "{trace}"],
    ["danger", "{trace}"],
    ["stakeout", "{trace}", "c_k"],
    ["timeline", "{trace}"],
    ["util", "{trace}"],
    ["findings", "{trace}"],
    ["decode", "--trace", "{trace}"],
]


def _args(command: list[str], trace: str) -> list[str]:
    return [trace if a == "{trace}" else a for a in command] + ["--no-cache"]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c).replace("{trace}", "T"))
def test_every_command_takes_the_traces_step_with_a_process(shared, capsys, command):
    args = [*_args(command, shared), "--pid", "200"]
    rc, out, err = run_cli([*args, "--step", "9", "-f", "json"], capsys)
    assert rc == 0, err
    assert "the GPU work of step 9 of 12" in err and "steps from the period" in err
    rc, out, err = run_cli([*args, "--step", "3"], capsys)
    assert (rc, out) == (2, "")
    assert err == f"tracelens: {shared}: step 3 launched no GPU work that passes the filters\n"


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c).replace("{trace}", "T"))
def test_every_command_takes_the_traces_step_with_a_device(side, capsys, command):
    args = _args(command, side)
    rc, out, err = run_cli([*args, "--device", "0", "--step", "3", "-f", "json"], capsys)
    assert rc == 0, err
    assert "the GPU work of step 3 of 6" in err and "NVTX ranges like 'train_step'" in err
    rc, out, err = run_cli([*args, "--device", "1", "--step", "3"], capsys)
    assert (rc, out) == (2, "")
    assert err == f"tracelens: {side}: step 3 launched no GPU work that passes the filters\n"


# -- tracelens steps with the filters: the trace's steps, restricted ------------------------
def _steps_rows(capsys, path, *args):
    import json

    rc, out, err = run_cli(["steps", path, "--no-cache", "--format", "json", *args], capsys)
    assert rc == 0, err
    return json.loads(out)


def test_steps_of_a_process_are_the_traces_steps_on_its_work(shared, capsys):
    """Fails on the old code: process 200's own period numbered its iterations 1 to 6."""
    doc = _steps_rows(capsys, shared, "--pid", "200", "--timeunit", "ns")
    assert [row["step"] for row in doc["steps"]] == [7, 8, 9, 10, 11, 12]
    assert doc["detail"].endswith(
        "; restricted to process 200: each step's GPU work there (steps 1, 2, 3, 4, 5, 6 hold "
        "none, left out)"
    )
    step9 = doc["steps"][2]
    # a_k, b_k and c_k (3 x 10 us + 1 us) of process 200's 3rd iteration
    assert (step9["kernels"], step9["kernel_ns"]) == (3, 2 * 100 * US + 3 * C_NS + US)
    assert {k["step"] for k in doc["top_kernels"]} == set(range(7, 13))


def test_steps_of_a_stream_keep_the_other_process_out(shared, capsys):
    doc = _steps_rows(capsys, shared, "--stream", "7", "--timeunit", "ns")
    assert [row["step"] for row in doc["steps"]] == [1, 2, 3, 4, 5, 6]
    # c_k of stream 7's 3rd iteration lasts 30 us, not process 200's 31
    assert doc["steps"][2]["kernel_ns"] == 2 * 100 * US + 3 * C_NS


def test_steps_of_a_device_outside_every_step_is_none(side, capsys):
    """Fails on the old code: device 1's own loop became 9 steps no other command knows."""
    doc = _steps_rows(capsys, side, "--device", "1")
    assert (doc["summary"]["count"], doc["steps"]) == (0, [])
    assert doc["detail"].endswith("; restricted to device 1: none of them holds GPU work there")


def test_steps_of_the_stepped_device_are_the_traces_rows(side, capsys):
    whole = _steps_rows(capsys, side)
    doc = _steps_rows(capsys, side, "--device", "0")
    assert doc["steps"] == whole["steps"] and doc["top_kernels"] == whole["top_kernels"]
    assert doc["detail"] == whole["detail"] + "; restricted to device 0: each step's GPU work there"


def test_steps_of_the_process_of_nvtx_steps_count_its_ranges(side, capsys):
    # the CPU span of each step is its range's; the copy is in the busy union, not a kernel
    whole = _steps_rows(capsys, side, "--timeunit", "ns")["steps"]
    rows = _steps_rows(capsys, side, "--pid", "100", "--timeunit", "ns")["steps"]
    assert rows == whole
