"""#13 "Stable: the same trace gives byte-identical output": two defects found against it.

1. Host threads that make as many CUDA API calls as each other were ranked by thread id, the
   OS's choice: two runs of one program whose two threads got their ids the other way round
   took their launches in the other order (tracelens.fingerprint.threads), a different
   document and a failed ``--check``. They are ranked by their own launch sequence now, on
   both ways of reading the calls (SQLite's sample on an export read directly, the query on
   a parquetdir export or a cache entry).
2. fingerprint.schema.json let a version 11 document hold version 12's step runs, which
   tracelens refuses.
"""

from __future__ import annotations

import copy
import json
import re

import jsonschema
import pytest
from conftest import run_cli
from fixtures.fingerprint_runs import Run, build_run
from test_inputs import write_parquetdir

import tracelens
import tracelens.fingerprint as fp
from tracelens.errors import UsageError
from tracelens.fingerprint import threads
from tracelens.synth import TraceBuilder

US = 1_000


def _tied(path, x_tid: int, y_tid: int, main: bool = True, y_first: bool = False):
    """Process 10 on GPU 0, 12 iterations: the main thread (tid 10, when ``main``: three
    calls an iteration, the busiest) launches m1, m2, m3; thread X (``x_tid``) a and b,
    thread Y (``y_tid``) c and d (two calls each an iteration: tied). X calls first (a, c,
    b, d), or Y (``y_first``: c, a, d, b), as the host scheduler ran them."""
    b = TraceBuilder("3.24.18")
    b.process(10, "python train.py")
    b.gpu(0)
    x, y = [("a", x_tid), ("b", x_tid)], [("c", y_tid), ("d", y_tid)]
    if y_first:
        x, y = y, x
    order = [("m1", 10), x[0], y[0], ("m2", 10), x[1], y[1], ("m3", 10)]
    if not main:
        order = [(name, tid) for name, tid in order if tid != 10]
    stream = {10: 7, x_tid: 8, y_tid: 9}
    for s in range(12):
        t0 = 1_000 * US + s * 1_000 * US
        free = dict.fromkeys(stream.values(), t0)
        for i, (name, tid) in enumerate(order):
            tc = t0 + 10 * US + i * 20 * US
            cid = b.runtime("cudaLaunchKernel_v7000", start=tc, end=tc + 5 * US, pid=10, tid=tid)
            start = max(free[stream[tid]], tc + 10 * US)
            b.kernel(f"void {name}(float*)", start=start, end=start + 100 * US, pid=10,
                     stream=stream[tid], correlation_id=cid)  # fmt: skip
            free[stream[tid]] = start + 110 * US
    return b.write(path)


def _sequences(doc) -> set[tuple[str, ...]]:
    names = [v["name"] for v in doc["variants"]]
    return {tuple(names[i] for i in e["sequence"]) for e in doc["paths"] if e["steps"]}


def _document(path, parquet: bool) -> tuple[str, bool]:
    """(the fingerprint of the export at ``path``, whether SQLite's sample path kept the
    calls), read directly or as a parquetdir export of it (the query path)."""
    if parquet:
        path = write_parquetdir(path, path.with_suffix(".pq"))
    with tracelens.open(path, cache=False) as trace:
        sampled = threads._export_thread_calls(trace) is not None
        return fp.dumps(tracelens.fingerprint(trace)), sampled


@pytest.mark.parametrize("main", [True, False], ids=["beside-the-busiest", "the-busiest"])
def test_swapped_thread_ids_give_the_same_document_both_ways(tmp_path, capsys, main):
    """X and Y's tids swapped: the old code took the lower id's launches first (a b before c
    d in one run, c d before a b in the other: 'launch orders changed', exit 1). Now X's
    sequence (a, b) comes before Y's (c, d) in both, read either way; also in a third run
    where Y made its calls first (the first call does not decide either; only the entry's
    places in host launch order, ``at``, differ there). Without the main thread X and Y tie
    as the busiest (the query then keeps the busiest's calls too; SQLite's sample path
    cannot count the busiest exactly and reads the query)."""
    one = _tied(tmp_path / "one.sqlite", 11, 12, main)
    other = _tied(tmp_path / "other.sqlite", 12, 11, main)
    late = _tied(tmp_path / "late.sqlite", 11, 12, main, y_first=True)
    read = {(p.stem, pq): _document(p, pq) for p in (one, other, late) for pq in (False, True)}
    texts = {key: text for key, (text, _) in read.items()}
    assert len({texts[p.stem, pq] for p in (one, other) for pq in (False, True)}) == 1, texts
    assert texts["late", False] == texts["late", True]
    assert {key: sampled for key, (_, sampled) in read.items()} == {
        (p.stem, pq): main and not pq for p in (one, other, late) for pq in (False, True)
    }
    expected = ("a", "b", "c", "d")
    if main:
        expected = ("m1", "m2", "m3", *expected)
    assert _sequences(fp.loads(texts["one", False])) == {expected}
    assert _sequences(fp.loads(texts["late", False])) == {expected}
    (tmp_path / "one.json").write_text(texts["one", False])
    for run in (other, late):
        rc, out, _ = run_cli(["fingerprint", run, "--check", tmp_path / "one.json"], capsys)
        follows = f"numerical path: {run.name} follows one.json exactly (1 region)\n"
        assert (rc, out) == (0, follows)


def test_both_ways_keep_the_same_calls_and_ties(tmp_path):
    """SQLite's sample path counts X and Y exactly and marks their tie as the query does:
    the same rows, ranks (by id, until the launch sequences are known) and tie groups."""
    for x, y in ((11, 12), (12, 11)):
        with tracelens.open(_tied(tmp_path / f"{x}.sqlite", x, y), cache=False) as trace:
            export = threads._export_thread_calls(trace)
            query = trace.query("fingerprint_thread_calls")
        assert export is not None and export.equals(query)
        assert export.columns == ["global_pid", "correlation_id", "thread", "tie"]
        # X's call first each time: 11 is rank 1, 12 rank 2
        assert export["thread"].to_list() == ([1, 2] if x == 11 else [2, 1]) * 24
        assert set(export["tie"].to_list()) == {1}


def test_a_thread_as_busy_as_the_sampled_busiest_reads_the_query(tmp_path):
    """Two threads tied as the busiest: the sample's count of the busiest is a lower bound,
    so a tie with it is not known from the scan; the query (every thread counted) is read,
    and it keeps both threads' calls, their tie group marked."""
    with tracelens.open(_tied(tmp_path / "t.sqlite", 11, 12, main=False), cache=False) as trace:
        assert threads._export_thread_calls(trace) is None
        calls = threads.thread_calls(trace)
    assert calls.height == 48
    assert calls["thread"].to_list() == [0, 1, 0, 1] * 12
    assert set(calls["tie"].to_list()) == {1}


def test_tie_groups_are_numbered_over_the_trace_the_same_both_ways(tmp_path):
    """Process 10: thread 10 makes 4 calls, 11 and 12 two each, 13 and 14 one each; process
    20: thread 20 five, 21 and 22 two each. The groups are numbered by process, then calls
    (the most first): (11, 12) 1, (13, 14) 2, (21, 22) 3; the busiest threads tie with none
    and their calls are not listed."""
    b = TraceBuilder("3.24.18")
    for pid in (10, 20):
        b.process(pid, "python train.py")
    b.gpu(0)
    tids = [10, 11, 12, 13, 10, 14, 11, 10, 12, 10, 20, 21, 20, 22, 20, 21, 20, 22, 20]
    called = {}
    for i, tid in enumerate(tids):
        tc, pid = 1_000 * US + i * 50 * US, tid // 10 * 10
        cid = b.runtime("cudaLaunchKernel_v7000", start=tc, end=tc + 5 * US, pid=pid, tid=tid)
        b.kernel("void k(float*)", start=tc + 10 * US, end=tc + 20 * US, pid=pid,
                 correlation_id=cid)  # fmt: skip
        called[(pid, cid)] = tid
    with tracelens.open(b.write(tmp_path / "t.sqlite"), cache=False) as trace:
        export = threads._export_thread_calls(trace)
        query = trace.query("fingerprint_thread_calls")
    assert export is not None and export.equals(query)
    ranks = {
        called[(pid >> 24) & 0xFFFFFF, cid]: (thread, tie)
        for pid, cid, thread, tie in query.iter_rows()
    }
    assert ranks == {11: (1, 1), 12: (2, 1), 13: (3, 2), 14: (4, 2), 21: (1, 3), 22: (2, 3)}


# -- the shipped schema says what the reader accepts, per version -------------------------
@pytest.fixture(scope="module")
def with_runs(tmp_path_factory):
    """A version 12 document of 5 steps: its step entries written as one run each."""
    path = build_run(tmp_path_factory.mktemp("runs") / "t.sqlite", Run(steps=5))
    with tracelens.open(path, cache=False) as trace:
        return json.loads(fp.dumps(fp.build(trace)))


def _schema():
    return json.loads(fp.SCHEMA_PATH.read_text(encoding="utf-8"))


def test_a_version_11_document_with_step_runs_fails_the_schema_as_tracelens_refuses_it(
    with_runs,
):
    assert with_runs["version"] == 12 and [[1, 5]] in [e["steps"] for e in with_runs["paths"]]
    v11 = {**copy.deepcopy(with_runs), "version": 11}
    at = next(i for i, e in enumerate(v11["paths"]) if e["steps"])
    message = f"not a valid fingerprint (paths[{at}].steps[0] is [1, 5], not an integer)"
    with pytest.raises(UsageError, match=re.escape(message)):
        fp.validate(copy.deepcopy(v11))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(v11, _schema())
    v10 = {**copy.deepcopy(with_runs), "version": 10}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(v10, _schema())


def test_each_version_as_tracelens_reads_it_passes_the_schema(with_runs):
    """Version 12 with runs; versions 10 and 11 listing every step (as they were written)."""
    jsonschema.validate(with_runs, _schema())
    listed = fp.validate(copy.deepcopy(with_runs))  # runs read back as every step
    for version in (10, 11):
        doc = {**copy.deepcopy(listed), "version": version}
        jsonschema.validate(doc, _schema())
        assert fp.validate(copy.deepcopy(doc)) == doc
