"""tracelens util: per-device busy/idle accounting, checked against a plain-Python sweep on
generated traces (overlapping streams, two devices, communication and copies), on a
hand-built trace whose answer is known, and on every shared real export."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from conftest import has_cuda_work, needs_shared, shared_traces
from fixtures.builder import DIRECT_COPY, FILL, NCCL_SENDRECV, XMMA_GEMM
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracelens
from tracelens.cli import main
from tracelens.errors import MissingDataError
from tracelens.filters import EventFilter
from tracelens.synth import TraceBuilder
from tracelens.util import FRAME_COLUMNS, IDLE_CAUSES

PID = 4242
BASE = 1_000_000  # every generated time is after this (API calls come before their work)
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)"
NAMES = {  # work class -> a real kernel name of that class
    "compute": XMMA_GEMM,
    "compute2": FILL,
    "communication": ALLREDUCE,
    "communication2": NCCL_SENDRECV,
    "memory": DIRECT_COPY,
}


@dataclass(frozen=True)
class Op:
    kind: str  # kernel | memcpy | memset
    work: str  # key of NAMES for kernels; 'memory' for memcpy/memset
    device: int
    stream: int
    start: int
    end: int
    launch: int  # start of the API call that launched it


def write_trace(path, ops, syncs, *, span_end=None):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    for d in sorted({o.device for o in ops} | {0}):
        b.gpu(d, "NVIDIA H100 80GB HBM3")
        # the process's CUDA context on it (nsys 2022.4 and older: its default stream)
        ids = {"hwId": 0, "vmId": 0, "processId": PID, "deviceId": d, "contextId": d + 1}
        b.add_row("TARGET_INFO_CUDA_NULL_STREAM", streamId=7, **ids)
    for o in ops:
        api = {"kernel": "cudaLaunchKernel_v7000", "memcpy": "cudaMemcpyAsync_v3020"}.get(
            o.kind, "cudaMemsetAsync_v3020"
        )
        cid = b.runtime(api, start=o.launch, end=o.launch + 10, pid=PID)
        common = {"start": o.start, "end": o.end, "pid": PID, "device": o.device}
        common |= {"stream": o.stream, "correlation_id": cid}
        if o.kind == "kernel":
            b.kernel(NAMES[o.work], **common)
        elif o.kind == "memcpy":
            b.memcpy("DtoD", 4096, **common)
        else:
            b.memset(4096, **common)
    for s, e in syncs:
        b.runtime("cudaStreamSynchronize_v3020", start=s, end=e, pid=PID)
    if span_end is not None:
        b.runtime("cudaFree_v3020", start=span_end - 5, end=span_end, pid=PID)
    b.write(path)
    return path


# -- an independent reference: plain Python over the elementary segments -------------------
def _class(o: Op) -> str:
    return "memory" if o.kind != "kernel" else o.work.rstrip("2")


def reference(ops, syncs, t0, t1, opened=()):
    """Per device of ``ops``, and of ``opened`` (the GPUs the process had a context on),
    the accounting and the idle causes, by elementary segments."""
    out = {}
    for dev in sorted({o.device for o in ops}):
        mine = [o for o in ops if o.device == dev]
        cuts = sorted({t0, t1} | {o.start for o in mine} | {o.end for o in mine})
        acc = dict.fromkeys(FRAME_COLUMNS[1:-1], 0)
        causes = dict.fromkeys(IDLE_CAUSES, 0)
        first = min(o.start for o in mine)
        last = max(o.end for o in mine)
        for a, b in zip(cuts, cuts[1:], strict=False):
            active = {_class(o) for o in mine if o.start <= a and o.end >= b}
            n = b - a
            acc["span_ns"] += n
            if not active:
                acc["idle_ns"] += n
                if b <= first:
                    causes["before_first"] += n
                elif a >= last:
                    causes["after_last"] += n
                continue
            acc["busy_ns"] += n
            acc["compute_ns"] += n * ("compute" in active)
            acc["communication_ns"] += n * ("communication" in active)
            acc["memory_ns"] += n * ("memory" in active)
            if "compute" not in active:
                acc["exposed_communication_ns"] += n * ("communication" in active)
                if "communication" not in active:
                    acc["exposed_memory_ns"] += n
        # Gaps: maximal idle stretches between first and last; a cause per gap.
        busy = sorted((o.start, o.end) for o in mine)
        merged = []
        for s, e in busy:
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        for (_, g0), (g1, _) in zip(merged, merged[1:], strict=False):
            launch = min(o.launch for o in mine if o.start == g1)
            if launch <= g0:
                causes["unexplained"] += g1 - g0
            elif any(s < launch and e >= g0 for s, e in syncs):  # blocked before it
                causes["sync"] += g1 - g0
            else:
                causes["launch_bound"] += g1 - g0
        out[dev] = (acc, {c: t for c, t in causes.items() if t})
    # An opened device without work in the window (when some device has work): all idle.
    for dev in sorted(set(opened) - set(out)) if out else ():
        acc = dict.fromkeys(FRAME_COLUMNS[1:-1], 0) | {"span_ns": t1 - t0, "idle_ns": t1 - t0}
        out[dev] = (acc, {"before_first": t1 - t0} if t1 > t0 else {})
    return out


ops_strategy = st.lists(
    st.builds(
        lambda kind, work, device, stream, start, dur, lag: Op(
            kind,
            work if kind == "kernel" else "memory",
            device,
            stream,
            BASE + start,
            BASE + start + dur,
            BASE + start - lag,
        ),
        st.sampled_from(["kernel", "kernel", "kernel", "memcpy", "memset"]),
        st.sampled_from(sorted(NAMES)),
        st.integers(0, 1),
        st.integers(7, 9),
        st.integers(0, 5_000),
        st.integers(1, 800),
        # How long before its work the launch call started: often after the previous work
        # on the device ended (launch-bound), sometimes long before (queued work).
        st.integers(1, 3_000),
    ),
    min_size=1,
    max_size=25,
)
syncs_strategy = st.lists(st.integers(0, 5_000), max_size=4, unique=True).map(
    lambda starts: [(BASE + s, BASE + s + 150) for s in sorted(starts)]
)


COLLECTIVE = {"communication": "AllReduce", "communication2": "SendRecv"}


def reference_communication(ops):
    """(device, collective) -> (calls, time_ns, busy_ns, exposed_ns), by elementary segments."""
    out = {}
    for dev, kind in sorted({(o.device, COLLECTIVE[o.work]) for o in ops if o.work in COLLECTIVE}):
        mine = [o for o in ops if o.device == dev]
        comm = [o for o in mine if COLLECTIVE.get(o.work) == kind and o.kind == "kernel"]
        compute = [o for o in mine if o.kind == "kernel" and _class(o) == "compute"]
        cuts = sorted({o.start for o in comm + compute} | {o.end for o in comm + compute})
        busy = exposed = 0
        for a, b in zip(cuts, cuts[1:], strict=False):
            if any(o.start <= a and o.end >= b for o in comm):
                busy += b - a
                exposed += (b - a) * (not any(o.start <= a and o.end >= b for o in compute))
        out[dev, kind] = (len(comm), sum(o.end - o.start for o in comm), busy, exposed)
    return out


def _non_overlapping(syncs):
    out = []
    for s, e in syncs:
        if not out or s > out[-1][1]:
            out.append((s, e))
    return out


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=ops_strategy, syncs=syncs_strategy, window=st.booleans())
def test_parts_add_up_and_match_a_plain_sweep(tmp_path, ops, syncs, window):
    syncs = _non_overlapping(syncs)
    path = write_trace(tmp_path / "gen.sqlite", ops, syncs)
    opened = {o.device for o in ops} | {0}  # the GPUs write_trace opens a context on
    where = EventFilter(start_ns=BASE + 1_000, end_ns=BASE + 4_000) if window else None
    with tracelens.open(path) as trace:
        u = trace.util(where)
        t0, t1 = u.start_ns, u.end_ns
    if window:
        assert (t0, t1) == (BASE + 1_000, BASE + 4_000)
        ops = [
            Op(o.kind, o.work, o.device, o.stream, max(o.start, t0), min(o.end, t1), o.launch)
            for o in ops
            if min(o.end, t1) > max(o.start, t0)
        ]
    expected = reference(ops, syncs, t0, t1, opened)
    rows = {r["device"]: r for r in u.frame.iter_rows(named=True)}
    assert sorted(rows) == sorted(expected)
    for dev, (acc, causes) in expected.items():
        row = rows[dev]
        assert {k: row[k] for k in acc} == acc
        assert (
            row["compute_ns"] + row["exposed_communication_ns"] + row["exposed_memory_ns"]
            == (row["busy_ns"])
        )
        assert row["busy_ns"] + row["idle_ns"] == row["span_ns"] == t1 - t0
        got = {
            r["cause"]: r["time_ns"] for r in u.idle_causes.filter(device=dev).iter_rows(named=True)
        }
        assert got == causes
        assert sum(got.values()) == row["idle_ns"]
    comm = {
        (r["device"], r["collective"]): (r["calls"], r["time_ns"], r["busy_ns"], r["exposed_ns"])
        for r in u.communication.iter_rows(named=True)
    }
    assert comm == reference_communication(ops)


def test_known_answer(tmp_path):
    """compute [0,100) on stream 7 with an all-reduce [50,150) on stream 8: 50 ns of the
    all-reduce is exposed; a copy [300,320) alone is exposed memory; the gap before it is
    launch-bound (launched at 250, after the GPU went idle at 150); the gap before the last
    kernel is sync (launched after the host left a cudaStreamSynchronize [330, 380))."""
    b0 = BASE
    ops = [
        Op("kernel", "compute", 0, 7, b0, b0 + 100, b0 - 50),
        Op("kernel", "communication", 0, 8, b0 + 50, b0 + 150, b0 - 40),
        Op("memcpy", "memory", 0, 7, b0 + 300, b0 + 320, b0 + 250),
        Op("kernel", "compute", 0, 7, b0 + 400, b0 + 500, b0 + 390),
    ]
    path = write_trace(tmp_path / "known.sqlite", ops, [(b0 + 330, b0 + 380)])
    with tracelens.open(path) as trace:
        u = trace.util()
    row = u.frame.row(0, named=True)
    t0 = b0 - 50  # the first event: the first launch call
    assert u.start_ns == t0 and u.end_ns == b0 + 500
    assert row["busy_ns"] == 150 + 20 + 100
    assert row["compute_ns"] == 200
    assert row["communication_ns"] == 100 and row["exposed_communication_ns"] == 50
    assert row["memory_ns"] == 20 and row["exposed_memory_ns"] == 20
    causes = {r["cause"]: (r["count"], r["time_ns"]) for r in u.idle_causes.iter_rows(named=True)}
    assert causes == {"launch_bound": (1, 150), "sync": (1, 80), "before_first": (1, 50)}
    comm = u.communication.row(0, named=True)
    assert comm["collective"] == "AllReduce" and comm["calls"] == 1
    assert (comm["time_ns"], comm["busy_ns"], comm["exposed_ns"]) == (100, 100, 50)
    assert any("message sizes unknown" in n for n in u.notes)
    figures = u.figures()
    assert figures["exposed_communication_ms"] == 50 / 1e6
    assert figures["util"] == pytest.approx(270 / 550)


def test_communication_per_collective_kind(tmp_path):
    b0 = BASE
    ops = [
        Op("kernel", "communication", 0, 8, b0, b0 + 100, b0 - 50),
        Op("kernel", "communication2", 0, 9, b0 + 50, b0 + 80, b0 - 40),
        Op("kernel", "compute", 0, 7, b0 + 60, b0 + 200, b0 - 30),
        Op("kernel", "communication", 1, 8, b0, b0 + 10, b0 - 20),
    ]
    path = write_trace(tmp_path / "comm.sqlite", ops, [])
    with tracelens.open(path) as trace:
        comm = trace.util().communication
    got = {(r["device"], r["collective"]): r for r in comm.iter_rows(named=True)}
    assert set(got) == {(0, "AllReduce"), (0, "SendRecv"), (1, "AllReduce")}
    assert got[0, "AllReduce"]["exposed_ns"] == 60  # [0,60) before the compute kernel
    assert got[0, "SendRecv"]["exposed_ns"] == 10  # [50,60)
    assert got[1, "AllReduce"]["exposed_ns"] == 10


@needs_shared
@pytest.mark.parametrize("path", shared_traces(), ids=lambda p: p.stem)
def test_every_shared_trace(trace_copies, path):
    copy = trace_copies[path.stem]
    with tracelens.open(copy) as trace:
        if not has_cuda_work(copy):
            with pytest.raises(MissingDataError):
                trace.util()
            return
        u = trace.util()
    assert not u.frame.is_empty()
    for row in u.frame.iter_rows(named=True):
        parts = row["compute_ns"] + row["exposed_communication_ns"] + row["exposed_memory_ns"]
        assert parts == row["busy_ns"] and row["busy_ns"] + row["idle_ns"] == row["span_ns"]
        causes = u.idle_causes.filter(device=row["device"])["time_ns"].sum()
        assert causes == row["idle_ns"]
        assert 0 <= row["utilization"] <= 1


def test_cli_json_keys(tmp_path, capsys):
    b0 = BASE
    ops = [Op("kernel", "compute", 0, 7, b0, b0 + 100, b0 - 50)]
    path = write_trace(tmp_path / "one.sqlite", ops, [])
    with pytest.raises(SystemExit) as exit_info:
        main(["util", str(path), "--format", "json"])
    assert exit_info.value.code == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc["devices"][0]) == list(FRAME_COLUMNS)
    assert doc["devices"][0]["busy_ns"] == 100
    assert doc["idle_causes"] == [{"device": 0, "cause": "before_first", "count": 1, "time_ns": 50}]
    assert doc["communication"] == []


def test_figures_for_gates(tmp_path):
    from tracelens.util import figures

    b0 = BASE
    ops = []
    for i in range(6):  # six steps of two kernels: 400 ns long, 300 ns busy
        t = b0 + i * 1_000
        ops += [Op("kernel", "compute", 0, 7, t, t + 200, b0 - 50)]
        ops += [Op("kernel", "compute2", 0, 7, t + 300, t + 400, b0 - 50)]
    path = write_trace(tmp_path / "fig.sqlite", ops, [])
    with tracelens.open(path) as trace:
        got = figures(trace)
        u = trace.util()
    assert got["util"] == pytest.approx(u.frame["busy_ns"][0] / u.frame["span_ns"][0])
    assert got["busy_ms"] == 6 * 300 / 1e6 and got["exposed_communication_ms"] == 0
    assert got["steps"] == 6 and got["step_median_ms"] == 400 / 1e6


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 2),  # device
            st.integers(0, 6),  # start: few values, so many rows start together
            st.integers(0, 3),  # stream
            st.integers(0, 9),  # duration
            st.integers(0, 3),  # kind
        ),
        max_size=40,
    )
)
def test_work_in_order_breaks_start_ties_as_a_full_sort(rows):
    """util.work_in_order sorts on device and start, then sorts again only the rows that
    start together (by stream, end, kind): the order of a sort on all five columns."""
    import polars as pl

    from tracelens.util_order import ORDER, _break_ties, _device_start_order

    frame = pl.DataFrame(
        [(d, 1_000 + s, 1_000 + s + n, st_, k, i) for i, (d, s, st_, n, k) in enumerate(rows)],
        schema=["device", "start_ns", "end_ns", "stream", "kind", "row"],
        orient="row",
    )
    ordered = frame[_break_ties(frame, _device_start_order(frame))]
    assert ordered.select(ORDER).equals(frame.sort(ORDER).select(ORDER))
    assert sorted(ordered["row"]) == list(range(frame.height))


@settings(deadline=None)  # no wall-clock limit: it failed at load ~50 (615 ms, then 4 ms)
@given(st.lists(st.one_of(st.none(), st.integers(-5, 40), st.integers(-(2**60), 2**60))))
def test_distinct_name_ids(ids):
    """The distinct ids of a name id column (dense range: a flag per id; wide: hashed)."""
    import polars as pl

    from tracelens.util_ops import _distinct_ids

    column = pl.Series(ids, dtype=pl.Int64)
    assert _distinct_ids(column) == sorted({i for i in ids if i is not None})


def test_the_sort_takes_the_read_and_gives_its_rows_by_device_and_start():
    """taken_by_device_start empties the list it is handed (nothing else holds the read:
    each column is freed once gathered) and gives the rows by device and start."""
    import polars as pl

    from tracelens.util_order import taken_by_device_start

    read = pl.DataFrame(
        {"device": [1, 0, 1, 0, 0], "start_ns": [5, 9, 2, 1, 4], "end_ns": [6, 10, 3, 2, 5]}
    )
    held = [read.clone()]
    work = taken_by_device_start(held)
    assert held == []
    assert work.equals(read.sort("device", "start_ns"))


def test_record_counts_count_each_kind_and_leave_out_the_absent():
    """record_counts: kernels, memcpys and memsets (kind 0, 1, 2) of the read, graph
    replays (3) not among them, a kind of no rows left out (the trace then counts it)."""
    import polars as pl

    from tracelens.util_read import record_counts

    work = pl.DataFrame({"kind": [0, 3, 0, 2, 0, 3]}, schema={"kind": pl.Int8})
    assert record_counts(work) == {"kernel": 3, "memset": 1}
    assert record_counts(work.clear()) == {}
