"""#13 "Stable: ... timing jitter ... do not change it": where an entry's launches are in the
capture (``at``, tracelens.fingerprint.places) must not depend on how two host threads of a
process happened to interleave their calls.

A unit's launches are taken one thread after another (tracelens.fingerprint.threads), so
two runs whose threads interleave otherwise have the same path and ``--check`` passes; but
``at`` placed the launches in correlation order, where the interleaving shows: the
documents' bytes differed, and a change was said at another launch number in each run.
Places now count in the unit's own order (one process's launches after another's, one
thread's after another's), each step's among that step's launches on the device.

Also: the shipped JSON Schema wants ``at`` to hold a pair at least, and the reader
accepted ``"at": []`` (tracelens never writes it: a listed entry has a launch, so a pair).
"""

from __future__ import annotations

import copy
import json
import re

import jsonschema
import pytest
from conftest import run_cli
from fixtures.thread_launches import ALLREDUCE, BROADCAST, US, iteration_calls, launch
from fixtures.thread_launches import fingerprint_text as _text

import tracelens.fingerprint as fp
from tracelens.errors import UsageError
from tracelens.synth import TraceBuilder


def _two_threads(path, comm_after, moved=None, comm=None, iterations: int = 12):
    """Process 10 on GPU 0, ``iterations`` (steps from the launch period, no NVTX; none in
    one iteration): thread 11 launches a, b, c on stream 7; thread 12 one collective on
    stream 9 (AllReduce, or ``comm[iteration]``), its call made after the
    ``comm_after[iteration % len]``-th compute call, as the host scheduler ran the two
    threads. ``moved``: the iteration whose compute thread launches a, c, b (a real change
    of its own order)."""
    b = TraceBuilder("3.24.18")
    b.process(10, "python train.py")
    b.gpu(0)
    for s in range(iterations):
        t0 = 1_000 * US + s * 1_000 * US
        compute = ("a", "c", "b") if s == moved else ("a", "b", "c")
        calls = [(name, 11, 7) for name in compute]
        collective = (comm or {}).get(s, ALLREDUCE)
        calls.insert(comm_after[s % len(comm_after)], (collective, 12, 9))
        launch(b, iteration_calls(t0, calls), {7: t0 + 100 * US, 9: t0 + 100 * US})
    return b.write(path)


@pytest.mark.parametrize("iterations", [12, 1], ids=["in-steps", "no-steps"])
def test_threads_interleaved_otherwise_give_the_same_bytes(tmp_path, capsys, iterations):
    """The AllReduce's call after a in every iteration of one run, after b in the other's,
    and alternating in a third: the same per-thread sequences. The old code's ``at`` was
    [0, 0, 1, 2, 3, 1] in the first (a, then b c after the AllReduce's place, then the
    AllReduce at 1) and [0, 0, 2, 3, 3, 2] in the second. Now the launches are one stretch,
    thread after thread, in all three: among each step's launches, or, with no steps (one
    iteration), among the device's."""
    runs = [
        _two_threads(tmp_path / f"{name}.sqlite", after, iterations=iterations)
        for name, after in (("one", (1,)), ("two", (2,)), ("mixed", (2, 1, 3)))
    ]
    texts = [_text(run) for run in runs]
    assert texts[1] == texts[0] and texts[2] == texts[0]
    doc = fp.loads(texts[0])
    names = [v["name"] for v in doc["variants"]]
    (entry,) = doc["paths"]
    assert [names[i] for i in entry["sequence"]] == ["a", "b", "c", ALLREDUCE]
    steps = list(range(1, 13)) if iterations > 1 else []
    assert (entry["steps"], entry["at"]) == (steps, [0, 0])
    (tmp_path / "one.json").write_text(texts[0])
    for run in runs[1:]:
        rc, out, _ = run_cli(["fingerprint", run, "--check", tmp_path / "one.json"], capsys)
        assert (rc, out) == (0, f"numerical path: {run.name} follows one.json exactly (1 region)\n")


def test_a_launch_moved_on_one_thread_is_still_a_path_change(tmp_path, capsys):
    """Guard: the compute thread's b and c swapped in iteration 5 (step 6) is a path change
    whichever way the threads interleaved there, said at the same launch of the step (the
    old code said #3 where the AllReduce's call came after a: it counted it first)."""
    (tmp_path / "base.json").write_text(_text(_two_threads(tmp_path / "base.sqlite", (1,))))
    boards = set()
    for name, after in (("early", (1,)), ("late", (2,))):
        run = _two_threads(tmp_path / f"{name}.sqlite", after, moved=5)
        rc, out, _ = run_cli(["fingerprint", run, "--check", tmp_path / "base.json"], capsys)
        assert rc == 1, out
        boards.add(out.replace(run.name, "RUN"))
    (board,) = boards
    assert board.splitlines() == [
        "numerical path: RUN differs from base.json in 1 of 1 regions",
        "first divergence: (the whole step), step 6, device 0, launch #2 of step 6: c where A "
        "had b (the same kernels as often, in another order)",
        "changes: 0 kernel-variant changes, 0 launch-configuration-only changes, 0 launches "
        "added, 0 removed, 1 launch order changed (the same kernels as often); 0 bring a new "
        "danger rule",
        "",
        "changed regions:",
        "  device 0, (the whole step), step 6",
        "    order    #2    c where A had b (the same kernels as often, in another order)",
    ]


def test_a_change_on_the_second_thread_is_placed_after_the_first_threads_launches(tmp_path, capsys):
    """The collective of iteration 2 (step 3) is a Broadcast in B: the unit's launch #4
    (a, b, c, then the other thread's), so launch #4 of step 3 whichever way the threads
    interleaved. The old code said #2 where the AllReduce's call came after a, #3 after
    b."""
    (tmp_path / "base.json").write_text(_text(_two_threads(tmp_path / "base.sqlite", (1,))))
    firsts = {}
    for name, after in (("early", (1,)), ("late", (2,))):
        run = _two_threads(tmp_path / f"{name}.sqlite", after, comm={2: BROADCAST})
        rc, out, _ = run_cli(["fingerprint", run, "--check", tmp_path / "base.json"], capsys)
        assert rc == 1, out
        firsts[name] = out.splitlines()[1]
    assert firsts == dict.fromkeys(
        ("early", "late"),
        f"first divergence: (the whole step), step 3, device 0, launch #4 of step 3: "
        f"{BROADCAST} replaced {ALLREDUCE}",
    )


def test_a_second_process_is_placed_among_its_steps_launches(tmp_path):
    """Processes 10 and 20 on GPU 0, each with its own NVTX step ranges (a and b; x and
    y). The unit takes process 10's launches, then 20's: x is the step's launch #3 on the
    device. The old code counted 20's from the step's first launch in the device's whole
    host order, where 20's come after all of 10's: x at place 8 in every step ("launch #9
    of step 1" of a step of 4 launches), a number that grew with the capture."""
    b = TraceBuilder("3.24.18")
    b.process(10, "python a.py")
    b.process(20, "python b.py")
    b.gpu(0)
    for s in range(4):
        t0 = 1_000 * US + s * 1_000 * US
        for pid, names, off in ((10, ("a", "b"), 0), (20, ("x", "y"), 5 * US)):
            b.nvtx_range(f"step_{s + 1}", start=t0 + off, end=t0 + off + 500 * US, pid=pid, tid=pid)
            for i, name in enumerate(names):
                tc = t0 + off + 10 * US + i * 40 * US
                cid = b.runtime(
                    "cudaLaunchKernel_v7000", start=tc, end=tc + 5 * US, pid=pid, tid=pid
                )
                start = tc + 10 * US + (pid - 10) * US
                b.kernel(f"void {name}(float*)", start=start, end=start + 20 * US, pid=pid,
                         stream=7 + pid, correlation_id=cid)  # fmt: skip
    doc = fp.loads(_text(b.write(tmp_path / "t.sqlite")))
    names = [v["name"] for v in doc["variants"]]
    assert doc["steps"] == {"method": "marker", "count": 4}
    assert [(e["steps"], [names[i] for i in e["sequence"]], e["at"]) for e in doc["paths"]] == [
        ([s], ["a", "b", "x", "y"], [0, 0]) for s in (1, 2, 3, 4)
    ]


def test_a_unit_of_many_threads_one_after_another_is_one_stretch():
    """70 threads, one launch each, in step 1 of device 0: in the device's capture one
    thread after another, each thread's launch is far from the next's (70 stretches, past
    AT_RUNS: no places), but among the step's launches they follow one another: one
    stretch from place 0. A second unit, outside the steps, keeps its places in the
    capture; a third (step 2), of 70 launches far apart in one thread, keeps none."""
    import polars as pl

    from tracelens.fingerprint.unitrows import AT_RUNS, _at_runs

    assert AT_RUNS < 70
    sizes = (70, 2, 70)
    pos = pl.Series([i for size in sizes for i in range(size)], dtype=pl.Int64)
    unit = pl.Series([u for u, size in enumerate(sizes) for _ in range(size)], dtype=pl.Int64)
    capture = [100 * i + 5 for i in range(70)] + [1, 2] + [100 * i + 10_000 for i in range(70)]
    groups = pl.Series(list(range(70)) + [0, 0] + [3] * 70, dtype=pl.Int64)
    units = pl.DataFrame({"device": [0, 0, 0], "step": [1, None, 2]})
    starts = pl.Series([0, 70, 72], dtype=pl.Int64)
    at = _at_runs(pl.Series(capture), pos, starts, unit, units, groups)
    assert at.to_pylist() == [[0, 0], [0, 1], None]


# -- "at": [] -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    path = _two_threads(tmp_path_factory.mktemp("at") / "t.sqlite", (1,))
    return json.loads(_text(path))


def test_an_empty_at_is_refused_as_the_schema_refuses_it(doc):
    """tracelens writes ``at`` with one pair at least, from offset 0, or leaves it out; the
    schema wants 2 items at least, and the reader now refuses ``[]`` too (it read it as no
    places). The reader refused a first offset other than 0, and now the schema does."""
    schema = json.loads(fp.SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.validate(doc, schema)
    empty = copy.deepcopy(doc)
    empty["paths"][0]["at"] = []
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(empty, schema)
    message = "not a valid fingerprint (paths[0].at is not offset, place pairs from offset 0)"
    with pytest.raises(UsageError, match=re.escape(message)):
        fp.validate(empty)
    late = copy.deepcopy(doc)  # the first stretch's offset is 0: the schema says so too
    late["paths"][0]["at"] = [1, 0]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(late, schema)
    with pytest.raises(UsageError, match=re.escape(message)):
        fp.validate(late)
    absent = copy.deepcopy(doc)
    del absent["paths"][0]["at"]
    jsonschema.validate(absent, schema)
    assert "at" not in fp.validate(absent)["paths"][0]
