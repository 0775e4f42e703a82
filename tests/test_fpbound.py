"""#13 "Stable: ... timing jitter ... do not change it": two host threads of one process whose
calls interleave otherwise near a step boundary must give the same fingerprint, since
``fingerprint --check BASELINE`` is a CI gate and a spurious "path changed" makes users turn
it off.

1. Period steps (no NVTX) are blocks of consecutive launches in correlation order, where the
   threads' calls interleave as the host scheduler ran them: a collective called at the end
   of iteration 6 in one run and after the compute thread's first launch of iteration 7 in
   the next moved that launch into step 6 (a, b, c, a) and the collective into step 7 (b,
   c, AllReduce, AllReduce): a path change. Each thread's launches are now split by their
   place in its own sequence (tracelens.fingerprint.threadsteps).
2. An entry's ``before``/``after`` (tracelens.fingerprint.ends) compared a launch's
   correlation id with the first and last of its process in the steps: a collective of the
   first step called before the compute thread's first launch of it counted as before the
   steps. They now compare a thread's launches with its own in the steps, and those of a
   thread with none in them (beside NVTX step ranges opened on another thread) by when
   their calls were made against the steps' span.
"""

from __future__ import annotations

import polars as pl
import pytest
from conftest import run_cli
from fixtures.thread_launches import ALLREDUCE, BROADCAST, US, launch
from fixtures.thread_launches import fingerprint_text as _text

import tracelens.fingerprint as fp
from tracelens.synth import TraceBuilder


def _period(path, late=(), iterations: int = 24, comm=None, moved=None, init: int = 0):
    """Process 10 on GPU 0, ``iterations`` (steps from the launch period, no NVTX; the step
    search needs no more since tracelens.steps_threads; 24 keeps the cases as written): thread
    11 launches a, b, c on stream 7 (a, c, b in iteration ``moved``), thread 12 a collective
    on stream 9 (AllReduce, or ``comm[iteration]``) after c; in the iterations of ``late``
    that call is made after the compute thread's a of the next iteration, as the host
    scheduler ran the two threads. ``init``: launches of a thread 13 before the first
    iteration, its only ones."""
    b = TraceBuilder("3.24.18")
    b.process(10, "python train.py")
    b.gpu(0)
    calls: list[tuple[str, int, int]] = [("init", 13, 9)] * init
    pending = None
    for s in range(iterations):
        compute = ("a", "c", "b") if s == moved else ("a", "b", "c")
        calls += [(name, 11, 7) for name in compute]
        if pending is not None:  # the last iteration's collective, after this one's a
            calls.insert(len(calls) - 2, pending)
            pending = None
        collective = ((comm or {}).get(s, ALLREDUCE), 12, 9)
        if s in late:
            pending = collective
        else:
            calls.append(collective)
    timed = [
        (name, tid, stream, 1_000 * US + i * 250 * US)
        for i, (name, tid, stream) in enumerate(calls)
    ]
    launch(b, timed, {})
    return b.write(path)


def _entries(text: str) -> list[tuple]:
    doc = fp.loads(text)
    names = [v["name"] for v in doc["variants"]]
    return [
        (e["steps"], [names[i] for i in e["sequence"]], e.get("before"), e.get("after"))
        for e in doc["paths"]
    ]


def test_a_collective_called_past_the_next_steps_first_launch_keeps_its_step(tmp_path, capsys):
    """The collective of iteration 6 (and, in a third run, of iterations 6 and 16) called
    after the next iteration's a: the step search finds the same 24 steps, and the old code
    read step 6 as a, b, c, a and step 7 as b, c, AllReduce, AllReduce (``--check`` exit 1).
    Now the same bytes as the run where every collective was called before the next a."""
    base = _period(tmp_path / "base.sqlite")
    runs = [_period(tmp_path / "late.sqlite", late={5}), _period(tmp_path / "two.sqlite", {5, 15})]
    text = _text(base)
    assert [_text(run) for run in runs] == [text, text]
    assert fp.loads(text)["steps"] == {"method": "period", "count": 24}
    assert _entries(text) == [(list(range(1, 25)), ["a", "b", "c", ALLREDUCE], None, None)]
    (tmp_path / "base.json").write_text(text)
    for run in runs:
        rc, out, _ = run_cli(["fingerprint", run, "--check", tmp_path / "base.json"], capsys)
        assert (rc, out) == (
            0,
            f"numerical path: {run.name} follows base.json exactly (1 region)\n",
        )


def test_a_thread_that_launched_only_before_the_period_steps_is_before_them(tmp_path):
    """Guard: period steps have no CPU span, so a thread with no launch in them (two
    launches before the first iteration) is placed by correlation id, as before: its entry
    says both are before the steps."""
    text = _text(_period(tmp_path / "init.sqlite", late={5}, init=2))
    assert _entries(text) == [
        ([], ["init", "init"], 2, None),
        (list(range(1, 25)), ["a", "b", "c", ALLREDUCE], None, None),
    ]


def _board(tmp_path, capsys, run) -> list[str]:
    (tmp_path / "base.json").write_text(_text(_period(tmp_path / "base.sqlite")))
    rc, out, _ = run_cli(["fingerprint", run, "--check", tmp_path / "base.json"], capsys)
    assert rc == 1, out
    return out.replace(run.name, "RUN").splitlines()


def test_a_collective_replaced_on_the_second_thread_is_still_reported(tmp_path, capsys):
    """Guard: the collective of iteration 6 a Broadcast, called after the next a: a change
    in step 6 (its launch #4, after the compute thread's three), said exactly."""
    run = _period(tmp_path / "run.sqlite", late={5}, comm={5: BROADCAST})
    assert _board(tmp_path, capsys, run) == [
        "numerical path: RUN differs from base.json in 1 of 1 regions",
        f"first divergence: (the whole step), step 6, device 0, launch #4 of step 6: {BROADCAST}"
        f" replaced {ALLREDUCE}",
        "changes: 1 kernel-variant change, 0 launch-configuration-only changes, 0 launches "
        "added, 0 removed; 0 bring a new danger rule",
        "",
        "changed regions:",
        "  device 0, (the whole step), step 6",
        f"    variant  #4    {BROADCAST} replaced {ALLREDUCE}",
    ]


def test_a_launch_moved_on_the_main_thread_is_still_reported(tmp_path, capsys):
    """Guard: the compute thread's b and c swapped in iteration 16, in a run whose
    collective of iteration 6 was called late: a launch-order change of step 16, said
    exactly."""
    run = _period(tmp_path / "run.sqlite", late={5}, moved=15)
    assert _board(tmp_path, capsys, run) == [
        "numerical path: RUN differs from base.json in 1 of 1 regions",
        "first divergence: (the whole step), step 16, device 0, launch #2 of step 16: c where A "
        "had b (the same kernels as often, in another order)",
        "changes: 0 kernel-variant changes, 0 launch-configuration-only changes, 0 launches "
        "added, 0 removed, 1 launch order changed (the same kernels as often); 0 bring a new "
        "danger rule",
        "",
        "changed regions:",
        "  device 0, (the whole step), step 16",
        "    order    #2    c where A had b (the same kernels as often, in another order)",
    ]


def _blocks(groups, block, blocks) -> list:
    from tracelens.fingerprint.threadsteps import thread_blocks

    g = pl.Series(groups, dtype=pl.Int64)
    return thread_blocks(g, pl.Series(block, dtype=pl.Int64), blocks).to_list()


def test_each_thread_is_split_by_its_own_sequence():
    """Blocks of 4 in host order (two steps), thread 1 (a collective a step) called once
    before thread 0's first launch of step 2 (the boundary in host order after it), once
    after: each thread's own launches in turn, one a step for thread 1, three for thread 0.
    A thread alone is its blocks. A thread that would leave its blocks by more than a step
    (two launches in step 3 of 3, none in the others: not steady) keeps them."""
    assert _blocks([0, 0, 0, 0, 1, 0, 0, 1], [0, 0, 0, 0, 1, 1, 1, 1], 2) == [
        0, 0, 0, 1, 0, 1, 1, 1
    ]  # fmt: skip
    assert _blocks([0] * 6, [None, 0, 0, 1, 1, None], 2) == [None, 0, 0, 1, 1, None]
    block = [0, 0, 1, 1, 2, 2, 2, 2]
    assert _blocks([0, 0, 0, 0, 0, 1, 0, 1], block, 3) == block


# -- before / after the steps ---------------------------------------------------------------
def _nvtx(path, first_early: bool, last_late: bool, steps: int = 6):
    """Process 10 on GPU 0: the main thread (10) opens a range step_N a step and launches
    a, b, c in it; thread 11 (no ranges) a Broadcast before the first range and after the
    last, and an AllReduce inside each range, called after the main thread's a (the first
    step's, before it: ``first_early``; the last step's after c: ``last_late``)."""
    b = TraceBuilder("3.24.18")
    b.process(10, "python train.py")
    b.gpu(0)
    calls = [(500 * US, BROADCAST, 11, 9)]
    for s in range(steps):
        t0 = 1_000 * US + s * 1_000 * US
        b.nvtx_range(f"step_{s + 1}", start=t0, end=t0 + 900 * US, pid=10, tid=10)
        order = [("a", 10, 7), ("b", 10, 7), ("c", 10, 7)]
        at = 0 if (s == 0 and first_early) else 3 if (s == steps - 1 and last_late) else 1
        order.insert(at, (ALLREDUCE, 11, 9))
        calls += [(t0 + 10 * US + i * 100 * US, *call) for i, call in enumerate(order)]
    calls.append((1_000 * US + steps * 1_000 * US, BROADCAST, 11, 9))
    free = {7: 0, 9: 0}
    for tc, name, tid, stream in calls:
        cid = b.runtime("cudaLaunchKernel_v7000", start=tc, end=tc + 5 * US, pid=10, tid=tid)
        start = max(free[stream], tc + 10 * US)
        b.kernel(f"void {name}(float*)", start=start, end=start + 50 * US, pid=10,
                 stream=stream, correlation_id=cid)  # fmt: skip
        free[stream] = start + 60 * US
    return b.write(path)


@pytest.mark.parametrize("late", [False, True], ids=["last-in-order", "last-after-c"])
def test_a_thread_beside_the_step_ranges_counts_the_same_before_and_after(tmp_path, late):
    """The first step's AllReduce called before the main thread's a (and the last one's
    after its c) or not: thread 11 launched nothing in the steps, so the old code counted
    it by correlation id against the main thread's first and last launch in the steps:
    before 2 (the Broadcast and that AllReduce) or 1, after 2 or 1. Now by when they were
    called: the Broadcasts before the first range and after the last, the AllReduces inside
    the ranges (between), whichever thread called first."""
    texts = {
        (early, last): _text(_nvtx(tmp_path / f"{early}{last}.sqlite", early, last))
        for early in (False, True)
        for last in (False, late)
    }
    assert len(set(texts.values())) == 1
    assert _entries(next(iter(texts.values()))) == [
        ([], [BROADCAST, *[ALLREDUCE] * 6, BROADCAST], 1, 1),
        ([1, 2, 3, 4, 5, 6], ["a", "b", "c"], None, None),
    ]


@pytest.mark.parametrize("pids", [True, False], ids=["pids", "by_kernel"])
def test_fingerprint_call_starts_golden(tmp_path, pids):
    """The calls of thread 11's two Broadcasts (correlation ids 1 and 26: before the first
    step range at 0.5 ms, after the last at 7 ms) and of a launch the export lacks (999: no
    row), asked by process or, without one, through the kernel record."""
    from queries.golden import assert_golden

    path = _nvtx(tmp_path / "t.sqlite", False, False)
    pid = "globalPid" if pids else "NULL"

    def prepare(trace):
        trace.db.execute(
            "CREATE OR REPLACE TEMP TABLE fp_call_keys AS "
            f"SELECT deviceId AS device, {pid} AS global_pid, correlationId AS correlation_id "
            "FROM kernels WHERE correlationId IN (1, 26) "
            f"UNION ALL SELECT 0, {pid if not pids else '(SELECT min(globalPid) FROM kernels)'}, 999"
        )

    case = "pids" if pids else "by_kernel"
    assert_golden(path, "fingerprint_call_starts", case, prepare, pids=pids)
