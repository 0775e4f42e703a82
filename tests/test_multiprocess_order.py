"""Host launch order with several processes: CUPTI numbers correlation ids per process, so
two processes' launches on one device interleave by those numbers as their counters happen
to run. The step search, the fingerprint and the diff take each process's launches in its
own order, one process after another (by its first launch on the device): a step holds one
process's launches, two runs whose counters interleave differently read the same, and no
output depends on the order the export lists its rows in."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

from conftest import run_cli
from fixtures.builder import FILL, FLASH_FWD, REDUCE_SUM, XMMA_GEMM

import tracelens
from tracelens import fingerprint as fp
from tracelens.synth import TraceBuilder

MOTIF = ((XMMA_GEMM, 40_000), (FILL, 2_000), (FLASH_FWD, 30_000), (REDUCE_SUM, 5_000))
HELPER = tuple((f"void helper_kernel_{i}<float>(float *, int)", 3_000) for i in range(3))


@dataclass(frozen=True)
class Process:
    """One process's program: ``steps`` repeats of ``motif`` on ``device`` from ``start``;
    its correlation ids from ``first_id``, ``id_step`` apart (its other API calls take the
    ones between)."""

    pid: int
    device: int = 0
    start: int = 1_000_000
    steps: int = 12
    motif: tuple = MOTIF
    first_id: int = 1
    id_step: int = 2


def _launches(process: Process) -> list[tuple]:
    """(pid, device, correlation id, start, end, name) of each of its launches."""
    rows, t, cid = [], process.start, process.first_id
    for _ in range(process.steps):
        for name, duration in process.motif:
            rows.append((process.pid, process.device, cid, t, t + duration, name))
            cid += process.id_step
            t += duration + 1_000
        t += 60_000  # the host's gap between steps
    return rows


def build(path, processes: list[Process], shuffle: int | None = None):
    """An export of ``processes``' launches (kernel and launching call, one thread each);
    ``shuffle``: the rows in an order shuffled with that seed, else in launch order."""
    b = TraceBuilder("3.25.0")
    for process in processes:
        b.process(process.pid, f"python worker_{process.pid}.py")
    for device in sorted({p.device for p in processes}):
        b.gpu(device, "NVIDIA H100 80GB HBM3")
    rows = [row for process in processes for row in _launches(process)]
    if shuffle is not None:
        random.Random(shuffle).shuffle(rows)
    for pid, device, cid, start, end, name in rows:
        b.runtime("cudaLaunchKernel_v7000", start=start - 900, end=start - 400, pid=pid,
                  correlation_id=cid)  # fmt: skip
        b.kernel(name, start=start, end=end, pid=pid, device=device, correlation_id=cid)
    return b.write(path)


def _steps(path, capsys) -> dict:
    rc, out, err = run_cli(["steps", path, "-f", "json"], capsys)
    assert rc == 0, err
    return json.loads(out)


def _spans(steps: dict) -> list[tuple[int, int, int, int]]:
    return [(s["device"], s["start_ns"], s["end_ns"], s["kernels"]) for s in steps["steps"]]


def _fingerprint(path, capsys, out) -> str:
    rc, _, err = run_cli(["fingerprint", path, "-o", out], capsys)
    assert rc == 0, err
    return out.read_text()


def _own_steps(process: Process) -> list[tuple[int, int, int]]:
    """(first start, last end, kernels) of each of ``process``'s steps."""
    launches = _launches(process)
    p = len(process.motif)
    blocks = [launches[i : i + p] for i in range(0, len(launches), p)]
    return [(b[0][3], b[-1][4], len(b)) for b in blocks]


def test_a_helper_process_on_the_device_leaves_the_steps_alone(tmp_path, capsys):
    """A second process runs a loop of its own (three helper kernels) on the training
    process's device, its correlation ids between the trainer's: the trainer's steps are
    those of the trainer alone (the old order put the helper's kernels inside them)."""
    trainer = Process(4242)
    helper = Process(5151, start=1_020_000, motif=HELPER, steps=7, id_step=3)
    alone = _steps(build(tmp_path / "alone.sqlite", [trainer]), capsys)
    both = _steps(build(tmp_path / "both.sqlite", [trainer, helper]), capsys)
    assert both["method"] == alone["method"] == "period"
    assert _spans(both) == _spans(alone)
    assert [(s, e, k) for _, s, e, k in _spans(both)] == _own_steps(trainer)


def test_two_processes_of_one_program_on_one_device_keep_their_own_steps(tmp_path, capsys):
    """Two processes run the same program on one device at once, their correlation ids
    colliding: each step is one process's (the first to launch, then the other), never
    half of each (the old order interleaved them launch by launch: steps of 8 kernels)."""
    first, second = Process(4242), Process(5151, start=1_010_000, first_id=1)
    steps = _steps(build(tmp_path / "two.sqlite", [second, first]), capsys)
    assert steps["method"] == "period"
    expected = _own_steps(first) + _own_steps(second)
    assert [(s, e, k) for _, s, e, k in _spans(steps)] == expected


def test_outputs_do_not_depend_on_row_order_or_on_how_counters_interleave(tmp_path, capsys):
    """One program, two runs: its two processes' correlation counters interleave
    differently (and the rows are listed in another order): the steps, the fingerprint and
    the diff's launch sequences are the same (the old order read a path change)."""
    run_a = [Process(4242), Process(5151, start=1_010_000, first_id=2)]
    run_b = [Process(777, first_id=40, id_step=3), Process(778, start=1_010_000, first_id=1)]
    a = build(tmp_path / "a.sqlite", run_a)
    a_shuffled = build(tmp_path / "a_shuffled.sqlite", run_a, shuffle=7)
    b = build(tmp_path / "b.sqlite", run_b, shuffle=3)
    steps = [_spans(_steps(path, capsys)) for path in (a, a_shuffled, b)]
    assert steps[0] == steps[1] == steps[2]
    docs = [_fingerprint(path, capsys, tmp_path / f"{path.stem}.json") for path in (a, a_shuffled)]
    assert docs[0] == docs[1]
    rc, out, err = run_cli(["fingerprint", b, "--check", tmp_path / "a.json"], capsys)
    assert rc == 0 and "follows" in out, out + err
    rc, out, err = run_cli(["diff", a, b, "--fail-if", "path_changed"], capsys)
    assert rc == 0, out + err
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        diff = fp.compare(tracelens.fingerprint(ta), tracelens.fingerprint(tb))
    assert diff.figures["path_changed"] == 0


def test_processes_on_separate_devices(tmp_path, capsys):
    """One process per device, correlation ids colliding across them: each device's steps
    are its process's, whatever the row order."""
    processes = [Process(4242, device=0), Process(5151, device=1, start=1_005_000)]
    ordered = _steps(build(tmp_path / "ordered.sqlite", processes), capsys)
    shuffled = _steps(build(tmp_path / "shuffled.sqlite", processes, shuffle=11), capsys)
    assert _spans(ordered) == _spans(shuffled)
    by_device = {d: [(s, e, k) for dd, s, e, k in _spans(ordered) if dd == d] for d in (0, 1)}
    assert by_device == {p.device: _own_steps(p) for p in processes}


def test_each_step_of_two_processes_on_one_device_selects_work(tmp_path, capsys):
    """The steps of two processes on one device run at once, numbered one process after the
    other: a step's window ends at the device's next step in time, so the first process's
    last step (12) is no empty window ending where the second one's first step began, before
    it (the old windows, by step number: 'none of the GPU work of step 12')."""
    path = build(tmp_path / "two.sqlite", [Process(4242), Process(5151, start=1_010_000)])
    for step in (1, 12, 13, 24):
        rc, out, err = run_cli(["census", path, "--step", str(step), "-f", "csv"], capsys)
        assert rc == 0 and out.count("\n") >= 2, err


def test_a_process_per_device_needs_no_ranks():
    """One process per device (ranks of a job, one GPU each) is one process's order on
    every device: no ranks are worked out (a group-by and a join of every launch); two
    processes on one device are ranked by their first launch there."""
    import polars as pl

    from tracelens.steps_order import process_ranks

    per_device = pl.DataFrame(
        {"device": [0, 0, 1, 1], "start_ns": [1, 2, 3, 4], "pid": [5, 5, 6, 6]}
    )
    assert process_ranks(per_device) is None
    shared = per_device.with_columns(pid=pl.Series([7, 5, 6, 6]))
    assert process_ranks(shared).to_list() == [0, 1, 0, 0]
