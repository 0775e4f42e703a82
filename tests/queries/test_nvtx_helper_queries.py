"""Golden tests of the NVTX helper files (queries/_nvtx_ranges, _nvtx_tree, _nvtx_op_ranges,
_nvtx_paths, _nvtx_projection, _nvtx_innermost) on one tiny trace built here. Process 5555;
range ids are NVTX_EVENTS rowids, in the order written:

thread 5555 (push/pop)                      thread 5556 (start/end, overlapping)
  1 step      [1000, 10000]                   5 A [2000, 6000]
  2 forward   [1100, 5000] (registered text)  6 B [4000, 8500] (overlaps A: not inside it)
  3 layer     [1200, 3000] in domain 2        7 C [6500, 7500] (inside B only)
  4 backward  [5000, 9000]                    8 handoff [2100, 2200] ends on thread 5555
  9 aten::mm, seq = 1, ... [6000, 7000]
 10 open      [10200, -] (never closed)
 11 domain 2's name 'mydomain' (eventType 75), 12 a mark at 12000 (the last NVTX time)

CUDA API calls (cid: thread [span] -> operation [on the GPU]):
  21: 5555 [1300, 1400] runtime, and a driver record [1150, 1160] -> kernel [1500, 2500]
  22: 5555 [5500, 5600] -> kernel [6000, 6500]
  23: 5555 [5000, 5010] (forward has ended, backward begins) -> memset [5100, 5200]
  24: 5556 [2500, 2600] -> memcpy [7000, 7100]
  25: 5556 [7000, 7100] -> kernel [7200, 7300]
  26: 5555 [10500, 10600] -> kernel [11000, 11500]
  27: 5557 [300, 400] (a thread without ranges) -> kernel [500, 600]
StringIds: 0 forward, 1 cudaLaunchKernel_v7000, 2 cuLaunchKernel, 3 the gemm (its short
name is the same string), then the API names of the copy and memset.
"""

from __future__ import annotations

import os

import polars as pl
import pytest
from fixtures.builder import XMMA_GEMM

import tracelens
from queries.golden import GOLDEN, assert_golden
from tracelens import _resources, nvtx, nvtx_held, nvtx_kernels, nvtx_sweep, nvtx_tree
from tracelens.nvtx import build_projection
from tracelens.synth import TraceBuilder, global_tid

PID = 5555
DOMAIN = 2


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    main, side = PID, PID + 1
    b.string("forward")  # StringIds id 0: the registered label
    ranges = [
        ("step", 1000, 10000, main, 59, {}),
        ("forward", 1100, 5000, main, 59, {"registered": True}),
        ("layer", 1200, 3000, main, 59, {"domain_id": DOMAIN}),
        ("backward", 5000, 9000, main, 59, {}),
        ("A", 2000, 6000, side, 60, {}),
        ("B", 4000, 8500, side, 60, {}),
        ("C", 6500, 7500, side, 60, {}),
        ("handoff", 2100, 2200, side, 60, {"endGlobalTid": global_tid(PID, main)}),
        ("aten::mm, seq = 1, op_id = 9, sizes = [[2, 3]]", 6000, 7000, main, 59, {}),
    ]
    for text, start, end, tid, kind, extra in ranges:
        b.nvtx_range(text, start=start, end=end, tid=tid, event_type=kind, **extra)
    b.add_row("NVTX_EVENTS", start=10200, end=None, eventType=59, text="open",
              globalTid=global_tid(PID, main))  # fmt: skip
    b.add_row("NVTX_EVENTS", start=0, end=None, eventType=75, text="mydomain",
              domainId=DOMAIN, globalTid=global_tid(PID, main))  # fmt: skip
    b.nvtx_mark("mark", at=12000, tid=main)

    def call(cid, tid, start, end, name="cudaLaunchKernel_v7000", event_class=0):
        b.runtime(name, start=start, end=end, tid=tid, correlation_id=cid,
                  event_class=event_class)  # fmt: skip

    call(21, main, 1300, 1400)
    call(21, main, 1150, 1160, "cuLaunchKernel", event_class=1)
    b.kernel(XMMA_GEMM, start=1500, end=2500, correlation_id=21)
    call(22, main, 5500, 5600)
    b.kernel(XMMA_GEMM, start=6000, end=6500, correlation_id=22)
    call(23, main, 5000, 5010, "cudaMemsetAsync_v3020")
    b.memset(64, start=5100, end=5200, correlation_id=23)
    call(24, side, 2500, 2600, "cudaMemcpyAsync_v3020")
    b.memcpy("HtoD", 64, start=7000, end=7100, correlation_id=24)
    call(25, side, 7000, 7100)
    b.kernel(XMMA_GEMM, start=7200, end=7300, correlation_id=25)
    call(26, main, 10500, 10600)
    b.kernel(XMMA_GEMM, start=11000, end=11500, correlation_id=26)
    call(27, PID + 2, 300, 400)
    b.kernel(XMMA_GEMM, start=500, end=600, correlation_id=27)
    return b.write(tmp_path_factory.mktemp("nvtx_helpers") / "nvtx_helpers.sqlite")


def test_nvtx_ranges(trace_path):
    # The nine closed ranges and the open one (its end the last NVTX time, the mark's 12000;
    # closed false); not the domain name or the mark. 'forward' is labelled from StringIds;
    # 'layer' is named 'mydomain:layer'; handoff ends on another thread (same_thread false).
    assert_golden(trace_path, "_nvtx_ranges", "all", tracelens.Trace.load_nvtx_text)


def test_nvtx_ranges_torch_label(trace_path):
    assert_golden(trace_path, "_nvtx_ranges", "torch_label", tracelens.Trace.load_nvtx_text)


def test_nvtx_ranges_nvtx_group(trace_path):
    # --group's key: 'path' the path (NULL under a range without a name), 'torch' the op
    # without its per-call arguments, 'name' (and anything else) the name as it is.
    assert_golden(trace_path, "_nvtx_ranges", "nvtx_group", tracelens.Trace.load_nvtx_text)


def test_nvtx_spans(trace_path):
    # Read from the export without nvtx_text: the nine closed ranges but handoff (8, ended on
    # another thread), and open (10) until the mark's 12000, the last NVTX time; not the
    # domain name (11) or the mark (12).
    assert_golden(trace_path, "_nvtx_spans", "all", tracelens.Trace.load_nvtx_spans)


def test_nvtx_spans_from_text(trace_path):
    # The same rows when nvtx_text is loaded first (they are taken from it then).
    def prepare(trace):
        trace.load_nvtx_text()
        trace.load_nvtx_spans()

    assert_golden(trace_path, "_nvtx_spans", "all", prepare)


def test_nvtx_tree(trace_path):
    # Thread 5555 nests: step (level 0) holds forward and backward (1), forward holds layer
    # (2), backward holds aten::mm (2); open is a root. Thread 5556: A is a root; B's
    # candidate parent (A, one level up) does not contain it, and no range does, so B is a
    # root too (level 0, though A was open when it started: depth 1); C's candidate is A
    # too (A had ended: depth 1), which does not contain it either, so its parent is the
    # range that does, B (level 1). handoff (ended on another thread) is not in the tree.
    # (A range inside two overlapping ranges: test_nvtx_overlap_queries.py.)
    assert_golden(trace_path, "_nvtx_tree", "all", build_projection)


def test_nvtx_tree_in_chunks(trace_path, monkeypatch):
    # One thread per chunk (the sweeps never split a thread): the same tree, and the same
    # ranges for the calls (those on thread 5557, which has no ranges, in the last chunk).
    monkeypatch.setattr(nvtx_tree, "TREE_CHUNK_RANGES", 1)
    assert_golden(trace_path, "_nvtx_tree", "all", build_projection)
    assert_golden(trace_path, "_nvtx_marks", "call_ranges", build_projection)
    assert_golden(trace_path, "_nvtx_op_ranges", "all", _with_ops)


NARROW = nvtx_tree.NARROW_RANGE_IDS


def _with_ops(trace) -> None:
    nvtx.build_sweep(trace, with_ops=True)


def _ops_after_projection(trace) -> None:
    build_projection(trace)
    nvtx.build_sweep(trace, with_ops=True)


def _tree_types(trace_path) -> dict[str, str]:
    with tracelens.open(trace_path) as trace:
        build_projection(trace)
        sql = "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = $t"
        return dict(trace.db.execute(sql, {"t": "nvtx_tree"}).fetchall())


def test_nvtx_tree_types(trace_path, monkeypatch):
    # Range ids in 32 bits when every RangeId fits (levels always), else 64, and the same
    # rows and projection either way (the projection's ids and level stay BIGINT).
    narrow = _tree_types(trace_path)
    assert [narrow[c] for c in ("range_id", "parent_id", "level", "depth")] == [
        "UINTEGER", "UINTEGER", "INTEGER", "INTEGER"
    ]  # fmt: skip
    monkeypatch.setattr(nvtx_tree, "NARROW_RANGE_IDS", range(0))
    wide = _tree_types(trace_path)
    assert (wide["range_id"], wide["parent_id"]) == ("BIGINT", "BIGINT")
    assert_golden(trace_path, "_nvtx_tree", "all", build_projection)
    assert_golden(trace_path, "_nvtx_projection", "all", build_projection)
    for ids in (NARROW, range(0)):
        monkeypatch.setattr(nvtx_tree, "NARROW_RANGE_IDS", ids)
        with tracelens.open(trace_path) as trace:
            frame = nvtx.gpu_projection(trace)
        assert {frame.schema[c] for c in ("level", "range_id", "parent_id")} == {pl.Int64}


@pytest.mark.parametrize("most", [0, 12])
def test_nvtx_sweep_with_and_without_every_label(trace_path, monkeypatch, most):
    # An export with at most NVTX_TEXT_EVENTS NVTX events (this one has 12) has every
    # event's text loaded once, the spans and held labels filtered from it; a bigger one
    # reads six columns of every event and the labels of the held ranges: the same sweep.
    monkeypatch.setattr(nvtx, "NVTX_TEXT_EVENTS", most)
    with tracelens.open(trace_path) as trace:
        nvtx.build_sweep(trace)
        tables = {
            r[0] for r in trace.db.execute("SELECT table_name FROM duckdb_tables()").fetchall()
        }
    assert ("nvtx_text" in tables) == (most > 0)
    assert_golden(trace_path, "_nvtx_tree", "all", build_projection)
    assert_golden(trace_path, "_nvtx_paths", "all", build_projection)
    assert_golden(trace_path, "_nvtx_paths_more", "below_roots", build_projection)
    assert_golden(trace_path, "_nvtx_projection", "all", build_projection)


def test_nvtx_sweep_fallbacks(trace_path, monkeypatch):
    # The same ranges when the calls and operations meet by a hash join (correlation ids too
    # sparse for a table of slots) and when the calls are searched thread by thread ((thread,
    # time) keys too wide for one integer).
    monkeypatch.setattr(nvtx_sweep, "DENSE_SLOTS_PER_CALL", 0)
    monkeypatch.setattr(nvtx_sweep, "DENSE_SLOTS_FLOOR", 0)
    monkeypatch.setattr(nvtx_sweep, "KEY_LIMIT", 0)
    assert_golden(trace_path, "_nvtx_marks", "call_ranges", build_projection)
    assert_golden(trace_path, "_nvtx_op_ranges", "all", _with_ops)
    assert_golden(trace_path, "_nvtx_projection", "all", build_projection)


def test_nvtx_calls(trace_path):
    # Every call record: cid 21 twice (its runtime record and its driver record, which
    # started first); the sweep keeps the runtime one (by _nvtx_call_classes).
    assert_golden(trace_path, "_nvtx_calls", "all")


def test_nvtx_call_classes(trace_path):
    # The calls' eventClass keyed by thread, correlation id, start and end (the sweep reads
    # the calls in any order, so it looks classes up by key, not by row): 0 for cid 21's
    # runtime record (1300-1400), 1 for its driver record (1150-1160), 0 for the others.
    assert_golden(trace_path, "_nvtx_call_classes", "all")


def test_nvtx_call_ranges(trace_path):
    # Each call, once per correlation id, with its innermost range, as nvtx_op_ranges gives
    # the operations: 21 layer (3; its runtime record, not the driver record before layer
    # began), 22 and 23 backward (4), 24 A (5), 25 C (7), 26 open (10), 27 none.
    assert_golden(trace_path, "_nvtx_marks", "call_ranges", build_projection)


def _tree_only(trace: tracelens.Trace) -> None:
    trace.load_nvtx_spans()
    nvtx_tree.build(trace, nvtx_tree.thread_chunks(trace))


def test_nvtx_marks(trace_path):
    # Thread 5555: step opens at 1000 (key 4001), forward 1100, layer 1200; layer's end at
    # 3000 leaves forward innermost (key 12000), ...; forward ends and backward starts at
    # 5000: the end first (key 20000: step), then backward (20001). Thread 5556: A, B, C,
    # and at their ends their parents (B's and A's: none). One chunk, every thread.
    every = {"from_tid": None, "to_tid": None, "null_tid": True}
    assert_golden(trace_path, "_nvtx_marks", "all", _tree_only, **every)


def test_nvtx_chunk_spans(trace_path):
    # The spans of thread 5556 only (A, B, C: handoff ended on another thread).
    tid = global_tid(PID, PID + 1)
    chunk = {"from_tid": tid, "to_tid": tid + 1, "null_tid": False}
    assert_golden(
        trace_path, "_nvtx_chunk_spans", "one_thread", tracelens.Trace.load_nvtx_spans, **chunk
    )


def test_nvtx_overlapping_threads(trace_path):
    # Thread 5556: B starts inside A without being inside it (level 0, depth 1).
    assert_golden(trace_path, "_nvtx_overlapping_threads", "all", _tree_only)


def _misfits(trace: tracelens.Trace) -> None:
    _tree_only(trace)
    misfits = pl.DataFrame(
        {
            "call": [1, 2, 3],
            "global_tid": [global_tid(PID, PID)] * 2 + [global_tid(PID, PID + 1)],
            "start": [2900, 9500, 5000],
            "end": [3100, 9600, 5100],
        }
    )
    trace.db.register("nvtx_misfit_calls", misfits.to_arrow())


def test_nvtx_call_refit(trace_path):
    # Call 1 straddles layer's end (2900-3100): forward (2) is the tightest range holding
    # it; call 2 (9500-9600) lies in step only (1); call 3 on 5556 (5000-5100) lies in A
    # and B, A the tighter (3000 + 900 < 1000 + 3400 ns of slack).
    assert_golden(trace_path, "_nvtx_call_refit", "three_calls", _misfits)


def test_nvtx_op_ranges(trace_path):
    # Each operation with the innermost range holding its call: cid 21's runtime call (the
    # driver record is later in the (eventClass, start) order) lies in layer (3); cid 27's
    # thread has no ranges (range NULL); cid 23 starts when forward ends, so backward (4);
    # cid 24 lies in A (5); cid 22 in backward (4) (aten::mm starts later); cid 25 on 5556
    # at 7000 lies in B and C, innermost C (7); cid 26 in the open range (10).
    assert_golden(trace_path, "_nvtx_op_ranges", "all", _with_ops)


def test_nvtx_op_ranges_after_the_projection(trace_path, monkeypatch):
    # The projection's sweep reads the operations' calls and spans only; the operations'
    # other columns are read when a later caller asks (as after build_sweep(with_ops=True)),
    # with the calls met through the table of slots or by hashing.
    assert not _built_ops(trace_path)
    assert_golden(trace_path, "_nvtx_op_ranges", "all", _ops_after_projection)
    monkeypatch.setattr(nvtx_sweep, "DENSE_SLOTS_PER_CALL", 0)
    monkeypatch.setattr(nvtx_sweep, "DENSE_SLOTS_FLOOR", 0)
    assert_golden(trace_path, "_nvtx_op_ranges", "all", _ops_after_projection)


def _built_ops(trace_path) -> bool:
    with tracelens.open(trace_path) as trace:
        build_projection(trace)
        sql = "SELECT count(*) FROM duckdb_views() WHERE view_name = 'nvtx_op_ranges'"
        return bool(trace.db.execute(sql).fetchone()[0])


def test_nvtx_op_spans(trace_path):
    # Every operation's process, correlation id and GPU span (cids 21 to 27), what the
    # projection reads of them.
    assert_golden(trace_path, "_nvtx_op_spans", "all")


def test_nvtx_held(trace_path):
    # The innermost ranges of the operations (layer 3, backward 4, A 5, C 7, open 10) and
    # their ancestors (step 1, forward 2, B 6); not aten::mm (9, no work) or handoff (8).
    assert_golden(trace_path, "_nvtx_held", "all", build_projection)


def test_nvtx_range_ops(trace_path):
    # The innermost ranges of the calls on thread 5555, whose ranges nest: layer 3 (cid 21's
    # kernel), backward 4 (cid 23's memset from 5100, cid 22's kernel to 6500: two calls)
    # and open 10 (cid 26). Thread 5556's ranges cross: its calls are
    # nvtx_overlap_holders'; cid 27's thread has no ranges.
    assert_golden(trace_path, "_nvtx_range_ops", "all", build_projection)


def test_nvtx_held_seeds(trace_path):
    # The ranges holding work themselves: layer 3, backward 4, A 5, B 6 (it holds C's call
    # too: A and B cross on thread 5556), C 7, open 10; not their other ancestors (step 1,
    # forward 2), which register_held adds.
    assert_golden(trace_path, "_nvtx_held_seeds", "all", build_projection)


def test_nvtx_tree_links(trace_path):
    # Every range with a parent (rows in no order; compared in RangeId order): forward 2,
    # backward 4 in step 1, layer 3 in forward 2, aten::mm 9 in backward 4, and C 7 in B 6
    # on thread 5556.
    with tracelens.open(trace_path) as trace:
        _tree_only(trace)
        links = trace.sql(_resources.query("_nvtx_tree_links")).sort("range_id")
    assert links.write_csv() == (GOLDEN / "_nvtx_tree_links__all.csv").read_text()


@pytest.mark.parametrize("dense", [True, False])
def test_register_held_either_way(trace_path, monkeypatch, dense):
    # The ancestors found through the table indexed by RangeId or, where ids are sparse,
    # by membership tests: the same ranges as nvtx_held's golden.
    if not dense:
        monkeypatch.setattr(nvtx_held, "DENSE_IDS_PER_LINK", 0)
        monkeypatch.setattr(nvtx_sweep, "DENSE_SLOTS_FLOOR", 0)
    with tracelens.Trace(trace_path) as trace:
        build_projection(trace)
        nvtx_held.register_held(trace.db)
        held = trace.db.execute("SELECT range_id FROM nvtx_held_ids ORDER BY 1").fetchall()
    assert [r for (r,) in held] == [1, 2, 3, 4, 5, 6, 7, 10]


def test_nvtx_held_names(trace_path):
    # The held ranges (nvtx_held's golden) with their names and styles: 'layer' in its
    # domain, B a start/end range; compared in RangeId order (the join gives no order).
    def held_with_text(trace: tracelens.Trace) -> None:
        build_projection(trace)
        trace.load_nvtx_held_text()

    with tracelens.open(trace_path) as trace:
        held_with_text(trace)
        rows = trace.sql(_resources.query("_nvtx_held_names")).sort("range_id")
    assert rows.write_csv() == (GOLDEN / "_nvtx_held_names__all.csv").read_text()


def test_nvtx_paths(trace_path):
    # The ranges holding work and their ancestors: step, forward, layer, backward, A, B, C,
    # open (not aten::mm, 9: no work); stacks and paths from the roots down (layer in
    # domain 2 by its full name).
    assert_golden(trace_path, "_nvtx_paths", "all", build_projection)


def test_nvtx_projection(trace_path):
    # Per range, from the first operation it holds to the end of the last: step holds cids
    # 21, 22, 23 ([1500, 6500], 3 ops, children forward and backward); forward holds 21 via
    # layer ([1500, 2500]); backward 22 and 23 ([5100, 6500]); A holds 24 ([7000, 7100]);
    # B holds 25 via C, its one child ([7200, 7300]); open 26 ([11000, 11500]). Not cid 27
    # (no range). (Work launched where two ranges overlap: test_nvtx_overlap_queries.py.)
    assert_golden(trace_path, "_nvtx_projection", "all", build_projection)


PROBES = pl.DataFrame(
    {
        "probe": [1, 2, 3, 4, 5, 6, 7],
        "global_tid": [global_tid(PID, t) for t in (PID, PID, PID + 1, PID + 2, PID, PID + 1, PID)],
        "start": [1300, 5000, 4600, 300, 9999, 2150, 10500],
        "end": [1400, 5010, 4700, 400, 10001, 2160, 10600],
    }
)


def _register_probes(trace: tracelens.Trace) -> None:
    trace.load_nvtx_text()
    trace.db.register("nvtx_probes", PROBES.to_arrow())


def test_nvtx_innermost(trace_path):
    # The ranges and names of nvtx_ranges(), as the nvtx command projects them: 1 in
    # mydomain:layer (the domain's name first); 2 in backward (forward ends at 5000, before
    # the probe does); 3 in B (the later-starting of A and B); 4 on a thread without ranges
    # and 5 straddling step's end: absent; 6 in A, not in handoff, which ends on another
    # thread than the one that opened it (nsys does not project it); 7 in open, which lasts
    # until the last NVTX time
    assert_golden(trace_path, "_nvtx_innermost", "seven_probes", _register_probes)


def test_thread_ranges(trace_path):
    # The closed ranges (not open, 10), each with its label (forward from StringIds);
    # top-level: step on 5555; A and B on 5556 (B overlaps A but does not lie inside it);
    # not handoff (inside A: it started on 5556) or C (inside B)
    assert_golden(trace_path, "_nvtx_ranges", "thread_ranges", tracelens.Trace.load_nvtx_text)


def _kernel_stats(trace: tracelens.Trace) -> None:
    build_projection(trace)
    nvtx_kernels.register_stats(trace, group="torch", name="demangled")


def test_nvtx_range_groups(trace_path):
    # the ranges holding GPU work (aten::mm holds none), one group per (name, style) here,
    # numbered and ranked in the names' order (A, B, C, backward, ...; no two share one)
    assert_golden(trace_path, "_nvtx_range_groups", "all", _kernel_stats)


def test_nvtx_kernel_holders(trace_path):
    # the innermost ranges of kernels on 5555 (layer 3, backward 4, open 10) with every
    # range holding them: layer in forward in step, backward in step; 5556's ranges
    # overlap and are absent
    assert_golden(trace_path, "_nvtx_kernel_holders", "all", _kernel_stats)


@pytest.mark.parametrize(
    ("query", "what"),
    [
        # kernels 21 (layer), 22 (backward), 26 (open) of 5555 and 27 (5557, no range);
        # not 25, launched on 5556 (overlapping)
        ("_nvtx_kernel_launches", "kernels off the overlapping threads"),
        # kernel 25 of 5556 with each range holding its call: B and C
        ("_nvtx_kernel_overlap_pairs", "kernels of the overlapping threads"),
    ],
)
def test_nvtx_kernel_pairs(trace_path, query, what):
    # rows in no stated order: compared sorted by every column
    with tracelens.open(trace_path) as trace:
        _kernel_stats(trace)
        # the statistics free the operations' columns once read: read again here
        nvtx.build_sweep(trace, with_ops=True)
        frame = trace.query(query, name_kind="short")
    actual = frame.sort(frame.columns, nulls_last=True).write_csv()
    expected = GOLDEN / f"{query}__all.csv"
    if os.environ.get("TRACELENS_UPDATE_GOLDEN"):
        expected.write_text(actual)
    assert actual == expected.read_text(), what
