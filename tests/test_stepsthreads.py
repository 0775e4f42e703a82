"""The period step search (no NVTX) of a process that launches from two host threads: the
compute thread's a, b, c and the communication thread's AllReduce (PyTorch DDP), whose call
the host scheduler put after the next iteration's a in some iterations. In host call order
(correlation id) one such iteration cut steps 3 and 4 wrong (a, b, c and a, AllReduce, b, c,
AllReduce) and two left no step at all, where the run without a late collective had 12: two
runs of one program disagreed on their steps (util --step, diff, report, fingerprint).
tracelens.steps_threads searches the busiest thread's launches alone and shares the other
thread's out to its steps by its own sequence.
"""

from __future__ import annotations

import pytest
from conftest import run_cli

import tracelens
import tracelens.fingerprint.threads as fp_threads
from tracelens.synth import TraceBuilder

US = 1_000
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
COLUMNS = ["step", "device", "start_ns", "end_ns", "busy_ns", "kernels", "kernel_ns", "outlier"]
HEADLINE = "12 steps from the period of the kernel launch sequence (device 0: a motif of 4 kernels)"


def _build(path, late=(), extra=None, threads: bool = True):
    """Process 10 on GPU 0, 12 iterations 2 ms apart: thread 11 launches a, b, c (and x in
    iteration ``extra``) on stream 7, thread 12 (11 when not ``threads``) an AllReduce on
    stream 9 after them. Every kernel runs at the same GPU time in every variant; only the
    order of the calls differs: in the iterations of ``late`` the collective's call is made
    after the compute thread's a of the next iteration."""
    b = TraceBuilder("3.24.18")
    b.process(10, "python train.py")
    b.gpu(0)
    calls, pending = [], None
    for s in range(12):
        t0 = 1_000 * US + s * 2_000 * US
        names = ["a", "b", "c"] + (["x"] if s == extra else [])
        calls += [(n, 11, 7, t0 + 10 * US + j * 150 * US) for j, n in enumerate(names)]
        if pending is not None:  # the last iteration's collective, after this one's a
            calls.insert(len(calls) - len(names) + 1, pending)
            pending = None
        collective = (ALLREDUCE, 12 if threads else 11, 9, t0 + 10 * US + len(names) * 150 * US)
        if s in late:
            pending = collective
        else:
            calls.append(collective)
    for name, tid, stream, start in calls:
        cid = b.runtime("cudaLaunchKernel_v7000", start=start - 8 * US, end=start - 6 * US,
                        pid=10, tid=tid)  # fmt: skip
        b.kernel(f"void {name}(float*)", start=start, end=start + 100 * US, pid=10,
                 stream=stream, correlation_id=cid)  # fmt: skip
    return b.write(path)


def _steps(path):
    with tracelens.open(path, cache=False) as trace:
        found = trace.steps()
        return found.detail, found.frame.select(COLUMNS).rows()


def _cli(args, capsys) -> str:
    rc, out, err = run_cli([*args, "--no-cache"], capsys)
    assert rc == 0, err
    return out


@pytest.mark.parametrize("late", [(2,), (2, 7)], ids=["one_late", "two_late"])
def test_late_collectives_give_the_steps_of_the_run_without(tmp_path, capsys, late):
    """12 steps, each one's window as in the run whose collectives were all called on time:
    one late iteration cut steps 3 and 4 at the late call (3: 5,010,000-5,410,000 ns), two
    gave 'no step structure found'."""
    on_time = _build(tmp_path / "on_time.sqlite")
    moved = _build(tmp_path / "late.sqlite", late=late)
    detail, rows = _steps(moved)
    assert (detail, rows) == _steps(on_time)
    assert len(rows) == 12
    assert rows[2] == (3, 0, 5_010_000, 5_560_000, 400_000, 4, 400_000, False)
    assert rows[3] == (4, 0, 7_010_000, 7_560_000, 400_000, 4, 400_000, False)
    head = _cli(["steps", moved], capsys).splitlines()[0]
    assert head == f"steps of late.sqlite: {HEADLINE}"
    util = _cli(["util", moved, "--step", "3", "-f", "csv"], capsys)
    assert util == _cli(["util", on_time, "--step", "3", "-f", "csv"], capsys)
    assert util.splitlines()[1].startswith("0,550000,400000,150000,")


def test_clean_steps_read_no_threads(tmp_path, monkeypatch):
    """A single-thread program's steps are as before, and steps that are each the motif
    (two threads, none late) read no call's thread: the thread read is for broken steps."""

    def unread(trace):
        raise AssertionError("the calls' threads were read")

    monkeypatch.setattr(fp_threads, "thread_calls", unread)
    for name, threads in (("one", False), ("two", True)):
        detail, rows = _steps(_build(tmp_path / f"{name}.sqlite", threads=threads))
        assert detail == HEADLINE
        assert [r[2:4] for r in rows] == [
            (1_010_000 + s * 2_000_000, 1_560_000 + s * 2_000_000) for s in range(12)
        ]


def test_an_extra_kernel_still_shows(tmp_path, capsys):
    """An iteration that launches one more kernel on the main thread is still that step's
    change (5 kernels, an outlier, 'exactly in 11 of its 12 steps'), late collective or not:
    the compute thread's own steps keep it, where the rule that shares out the other
    threads' launches would have split its launches 3 at a time from there on."""
    plain = _build(tmp_path / "extra.sqlite", extra=4)
    late = _build(tmp_path / "extra_late.sqlite", late=(2,), extra=4)
    detail, rows = _steps(plain)
    assert detail == (
        "12 steps from the period of the kernel launch sequence (device 0: a motif of 4 "
        "kernels, exactly in 11 of its 12 steps, with void x(float*) too in 1); outliers: "
        "step 5 (step 5 also launches void x(float*), which too few steps do to judge them "
        "apart)"
    )
    assert rows[4] == (5, 0, 9_010_000, 9_710_000, 500_000, 5, 500_000, True)
    assert [r for r in rows if r[0] != 5] == [
        (s + 1, 0, 1_010_000 + s * 2_000_000, 1_560_000 + s * 2_000_000, 400_000, 4,
         400_000, False)
        for s in range(12) if s != 4
    ]  # fmt: skip
    assert _steps(late) == (detail, rows)


def test_fingerprint_of_two_late_collectives_is_the_on_time_ones(tmp_path):
    """The fingerprint hands the step search its launches in order without their calls'
    ids; its steps are those of `tracelens steps` all the same (the launches read again
    with them, where the search needs the threads): 12 iterations with two late collectives
    gave no steps there and another document than the run without (test_fpbound used 24)."""
    import tracelens.fingerprint as fp

    def text(path):
        with tracelens.open(path, cache=False) as trace:
            return fp.dumps(tracelens.fingerprint(trace))

    on_time = text(_build(tmp_path / "on_time.sqlite"))
    assert text(_build(tmp_path / "late.sqlite", late=(2, 7))) == on_time
    assert [e["steps"] for e in fp.loads(on_time)["paths"]] == [list(range(1, 13))]
