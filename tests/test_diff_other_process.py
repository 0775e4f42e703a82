"""tracelens diff when the longer capture's extra launches are all of kernels the other run
never launches (the other_work clue): the board says who launched them when the trace shows
it. Processes that launch none of the kernels both runs share (a data loader, a second job)
are another process's work on the same GPU; the process that launches the shared kernels
too is the program's own (a new part of it). Both kinds at once keep the hedged verdict."""

from __future__ import annotations

import shutil

import pytest
from fixtures.builder import FLASH_FWD, add_graph_replays
from test_diff_unseen_pairs import PID, TRAIN, clue, pair, recorder

import tracelens
from tracelens.compare import diff
from tracelens.compare.render import to_json
from tracelens.synth import global_pid

STEPS = 20
DECODE = "void nvjpeg::decode_kernel<unsigned char>(nvjpeg::Params)"
EMA = "void at::native::ema_update_kernel<float>(float*, const float*, float)"
LOADER = PID + 1
WORKERS = (6001, 6002, 6003, 6004)

HEDGED = "B holds 20 more launches, all of kernels A never launches"
# The verdicts' common end
COST = (
    "the kernel lines say what they cost, and per-call times of the shared kernels can "
    "include waiting for that work"
)


def run(tmp_path, stem, extra=lambda i: (), processes=(), tail=()):
    """``STEPS`` training steps of process ``PID`` on one stream; ``extra(i)``: the
    (pid, kernel) launches of step ``i`` beside its attention call (20 µs each, stream 9);
    ``processes``: the (pid, name) the export lists besides the training process;
    ``tail``: (pid, kernel) launches after the last step (20 µs each)."""
    r, t = recorder(), 1_000_000
    for pid, name in processes:
        r.process(pid, name)
    for i in range(STEPS):
        for name, dur in TRAIN:
            r.kernel(name, t, dur, pid=PID)
            if name == FLASH_FWD:
                for k, (pid, kernel) in enumerate(extra(i)):
                    r.kernel(kernel, t + 100 + 30_000 * k, 20_000, pid=pid, stream=9)
            t += dur + 1_000
        t += 20_000
    for pid, kernel in tail:
        r.kernel(kernel, t, 20_000, pid=pid)
        t += 21_000
    return r.write(tmp_path, stem).path


def loader(i):
    return [(LOADER, DECODE)]


@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    return run(tmp_path_factory.mktemp("alone"), "alone")


@pytest.fixture(scope="module")
def with_loader(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("loader")
    return run(tmp, "loader", loader, [(LOADER, "python dataloader")])


def test_a_data_loaders_kernels_are_another_process(alone, with_loader):
    c = clue(pair(alone, with_loader), "other_work")
    assert c.clue == (
        "B holds 20 more launches, all of kernels A never launches, from another process: "
        f"python dataloader (pid {LOADER})"
    )
    assert c.verdict == (
        "the launches both runs make match in order; B's extra ones are another process's "
        "work on the same GPU (that process launches none of the kernels both runs share), "
        f"not the program's, nor a capture of more of its work: {COST}"
    )


def test_the_shorter_side_names_the_longer_sides_process(alone, with_loader):
    """A holds the loader's launches and B does not: the clue is of A."""
    c = clue(pair(with_loader, alone), "other_work")
    assert c.clue == (
        "A holds 20 more launches, all of kernels B never launches, from another process: "
        f"python dataloader (pid {LOADER})"
    )
    assert c.verdict.startswith("the launches both runs make match in order; A's extra ones")


def test_several_worker_processes_are_named_two_and_counted(tmp_path, alone):
    """Four loader workers: the one with most launches first (6004, every step), then by
    pid (6001 and 6002: 7 launches each); the other two are counted."""
    workers = [(pid, "python loader_worker") for pid in WORKERS]

    def extra(i):
        return [(WORKERS[i % 3], DECODE), (WORKERS[3], DECODE)]

    b = run(tmp_path, "workers", extra, workers)
    c = clue(pair(alone, b), "other_work")
    assert c.clue == (
        "B holds 40 more launches, all of kernels A never launches, from 4 other processes: "
        "python loader_worker (pid 6004), python loader_worker (pid 6001) and 2 more"
    )
    assert "(those processes launch none of the kernels both runs share)" in c.verdict


def test_two_other_processes_are_both_named(tmp_path, alone):
    b = run(
        tmp_path,
        "two",
        lambda i: [(WORKERS[i % 2], DECODE)],
        [(WORKERS[0], "python a.py"), (WORKERS[1], "python b.py")],
    )
    c = clue(pair(alone, b), "other_work")
    assert c.clue == (
        f"{HEDGED}, from 2 other processes: python a.py (pid 6001) and python b.py (pid 6002)"
    )


def test_a_process_the_export_does_not_name_is_shown_by_pid(tmp_path, alone):
    b = run(tmp_path, "unnamed", loader)
    c = clue(pair(alone, b), "other_work")
    assert c.clue == f"{HEDGED}, from another process: pid {LOADER}"


def test_a_long_process_name_is_cut(tmp_path, alone):
    name = "python /home/user/projects/loader/decode_worker.py --shard 3"
    b = run(tmp_path, "long", loader, [(LOADER, name)])
    c = clue(pair(alone, b), "other_work")
    assert c.clue == (
        f"{HEDGED}, from another process: python /home/user/projects/loader/decod… (pid {LOADER})"
    )


def test_new_kernels_of_the_training_process_are_a_new_part_of_the_program(tmp_path, alone):
    """B's training process runs 20 launches of a kernel A never launches after the same
    steps (an EMA pass over the weights): the process that launches the shared kernels."""
    b = run(tmp_path, "ema", tail=[(PID, EMA)] * 20)
    c = clue(pair(alone, b), "other_work")
    assert c.clue == (
        f"{HEDGED}, from the program's own process python train.py (pid {PID}): "
        "a new part of the program"
    )
    assert c.verdict == (
        "the launches both runs make match in order; B's extra ones are a new part of the "
        "program (that process launches the kernels both runs share too), not another "
        f"process's work, nor a capture of more of the same work: {COST}"
    )


def test_both_kinds_of_launcher_keep_the_hedged_verdict(tmp_path, alone):
    """The training process launches one new kernel and a loader another: both another
    process's work and a new part of the program, which the clue does not pick between;
    the launches per kernel and process say so."""
    from tracelens.compare.collect import collect
    from tracelens.filters import EventFilter

    b = run(tmp_path, "both", tail=[(PID, EMA), (LOADER, DECODE)] * 10)
    c = clue(pair(alone, b), "other_work")
    assert c.clue == HEDGED
    assert "(another process on the same GPU, or a new part of the program)" in c.verdict
    with tracelens.open(b) as tb:
        side = collect(tb, "demangled", EventFilter(), 10**9, 10**9)
    rows = {(name, pid): n for _device, name, pid, n in side.launchers.iter_rows()}
    assert (rows[(EMA, PID)], rows[(DECODE, LOADER)], rows[(FLASH_FWD, PID)]) == (10, 10, 20)


def test_the_cached_diff_says_the_same(alone, with_loader, cache_dir):
    """The second diff reads the kept work and kernel tables back (compare.workfile): the
    same board, the loader named."""

    def board():
        with tracelens.open(alone) as ta, tracelens.open(with_loader) as tb:
            return to_json(diff(ta, tb))

    first, second = board(), board()
    assert f"from another process: python dataloader (pid {LOADER})" in first
    assert second == first


def test_only_the_devices_own_launchers_are_named(tmp_path):
    """Two ranks, one process per GPU; B's ranks each run an EMA pass after the steps (20
    launches on GPU 0, 10 on GPU 1). The clue is of GPU 0 (the larger difference): its
    rank's process alone, not rank 1's, whose extra launches are on the other GPU."""
    rank1 = PID + 10

    def ranks(stem, tail):
        r, t = recorder(), 1_000_000
        r.process(rank1, "python train.py")
        r.gpu(1, "NVIDIA H100 80GB HBM3")
        for _ in range(STEPS):
            for name, dur in TRAIN:
                r.kernel(name, t, dur, pid=PID)
                r.kernel(name, t, dur, pid=rank1, device=1)
                t += dur + 1_000
            t += 20_000
        for i in range(tail):
            r.kernel(EMA, t, 20_000, pid=PID)
            if i % 2:
                r.kernel(EMA, t, 20_000, pid=rank1, device=1)
            t += 21_000
        return r.write(tmp_path, stem).path

    c = clue(pair(ranks("a", 0), ranks("b", 20)), "other_work")
    assert c.clue == (
        f"{HEDGED}, from the program's own process python train.py (pid {PID}): "
        "a new part of the program"
    )


def test_a_pid_listed_twice_is_named_by_its_first_row(tmp_path, alone):
    """A loader that exec'd another program is listed twice under one pid: the clue names
    it as `tracelens info` and the report header do, by the first row."""
    names = [(LOADER, "python dataloader"), (LOADER, "nvjpeg_helper")]
    b = run(tmp_path, "exec", loader, names)
    c = clue(pair(alone, b), "other_work")
    assert c.clue == f"{HEDGED}, from another process: python dataloader (pid {LOADER})"


def test_graph_replays_traced_at_graph_level_keep_the_hedged_verdict(tmp_path, alone, with_loader):
    """The loader's pair with two CUDA graph replays of the training process traced at
    graph level added to B: their kernels are in no table, so which kernels the training
    process launches is not all known, and the clue does not say whose the extra ones are
    (without the replays it names the loader)."""
    replayed = tmp_path / "replayed.sqlite"
    shutil.copy(with_loader, replayed)
    starts = (500_000, 502_000)
    rows = [(s, s + 500, 0, 1, None, 7, 90_000 + s, global_pid(PID), 3, 4) for s in starts]
    add_graph_replays(replayed, rows)
    assert "from another process" in clue(pair(alone, with_loader), "other_work").clue
    c = clue(pair(alone, replayed), "other_work")
    assert c.clue == HEDGED
    assert "(another process on the same GPU, or a new part of the program)" in c.verdict
