"""--start/--end windows by nsys's rule (nsysstats' filtered views, used by `nsys stats` and
`nsys analyze` with start=/end=): an event is in the window when it ends at or after --start
and starts before --end. An event that starts exactly at --end is out (tracelens kept it
before); one that ends exactly at --start is in (before and after).

The edges fixture: in the window [10 ms, 20 ms), per kind (kernel, memcpy, memset), one
operation that ends exactly at 10 ms, one inside, one that starts exactly at 20 ms; a
cudaDeviceSynchronize ending at 10 ms and one starting at 20 ms; an NVTX range ending at
10 ms ('before') and one starting at 20 ms ('after'). Every operation's launching call
starts before 20 ms. The expected findings rows are those of `nsys analyze` 2022.4 on this
export with start=10000000:end=20000000 (test_nsys_analyze_agrees checks them live where
nsys is installed)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess

import polars as pl
import pytest
from conftest import run_cli
from test_stepwork_nvtx import build_period

import tracelens
from tracelens.filters import in_window, in_window_sql
from tracelens.synth import TraceBuilder

PID = 4242
MS = 1_000_000
S, E = 10 * MS, 20 * MS
WINDOW = ["--start", str(S), "--end", str(E)]
GEMM = "void xmma_gemm_split_k(float*)"  # a split-K GEMM: danger lists it
NSYS = shutil.which("nsys")


def build_edges(path):
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")

    def call(name, at, dur=10_000):
        return b.runtime(name, start=at, end=at + dur, pid=PID)

    for s, e in [(S - 2 * MS, S), (S + 2 * MS, S + 4 * MS), (E, E + 2 * MS)]:
        b.kernel(GEMM, start=s, end=e, correlation_id=call("cudaLaunchKernel_v7000", s - 50_000))
    for s, e in [(S - MS, S), (S + 6 * MS, S + 7 * MS), (E, E + MS)]:
        cid = call("cudaMemcpy_v3020", s - 1000, e - s + 2000)
        b.memcpy("HtoD", 4_000_000, start=s, end=e, correlation_id=cid)
    for s, e in [(S - 3 * MS, S), (S + 8 * MS, S + 8 * MS + MS // 2), (E, E + 3 * MS)]:
        cid = call("cudaMemset_v3020", s - 1000, e - s + 2000)
        b.memset(1_000_000, start=s, end=e, mem_kind=4, correlation_id=cid)
    call("cudaDeviceSynchronize_v3020", S - MS, MS)
    call("cudaDeviceSynchronize_v3020", E, MS)
    b.nvtx_range("before", start=S - MS, end=S, pid=PID)
    b.nvtx_range("after", start=E, end=E + MS, pid=PID)
    return b.write(path)


@pytest.fixture(scope="module")
def edges(tmp_path_factory):
    return build_edges(tmp_path_factory.mktemp("winbound") / "edges.sqlite")


def _csv(capsys, args):
    code, out, err = run_cli([*args, "--no-cache", "-f", "csv"], capsys)
    assert code == 0, err
    return list(csv.DictReader(io.StringIO(out)))


def test_in_window_is_nsys_rule_on_numbers_and_polars():
    # [start, end] against [10, 20): ends at 10 in, starts at 20 out, no duration at 20 out
    cases = [(5, 10, True), (10, 10, True), (12, 15, True), (5, 25, True), (19, 30, True),
             (20, 30, False), (20, 20, False), (0, 9, False)]  # fmt: skip
    assert [in_window(s, e, 10, 20) for s, e, _ in cases] == [k for *_, k in cases]
    frame = pl.DataFrame({"s": [c[0] for c in cases], "e": [c[1] for c in cases]})
    kept = frame.select(in_window(pl.col("s"), pl.col("e"), 10, 20).alias("k"))["k"]
    assert kept.to_list() == [k for *_, k in cases]
    assert in_window(20, 30, None, None) is True
    assert in_window(20, 30, None, 20) is False and in_window(0, 10, 10, None) is True
    assert in_window_sql(10, 20) == '"end" >= 10 AND start < 20'


def test_census_drops_the_kernel_starting_at_end(edges, capsys):
    """Fails on the old code: 3 instances (the kernel at 20 ms was kept)."""
    (row,) = _csv(capsys, ["census", str(edges), *WINDOW])
    assert (row["instances"], row["total_ns"]) == ("2", str(4 * MS))


def test_memory_drops_the_copy_and_memset_starting_at_end(edges, capsys):
    rows = {r["operation"]: r for r in _csv(capsys, ["memory", str(edges), *WINDOW])}
    assert rows["[CUDA memcpy HtoD]"]["count"] == "2"
    assert (rows["[CUDA memset]"]["count"], rows["[CUDA memset]"]["total_ns"]) == ("2", "3500000")


def test_stakeout_lists_the_launches_in_the_window(edges, capsys):
    rows = _csv(capsys, ["stakeout", str(edges), "gemm", *WINDOW])
    assert [int(r["start_ns"]) for r in rows] == [S - 2 * MS, S + 2 * MS]


def test_danger_and_decode_count_two_instances(edges, capsys):
    (danger,) = _csv(capsys, ["danger", str(edges), *WINDOW])
    (decoded,) = _csv(capsys, ["decode", "--trace", str(edges), *WINDOW])
    assert (danger["rule_id"], danger["instances"], decoded["instances"]) == (
        "gemm_split_k", "2", "2"
    )  # fmt: skip


def test_lineup_counts_two_launches(edges, capsys):
    rows = _csv(capsys, ["lineup", str(edges), *WINDOW])
    gemm = next(r for r in rows if r["category"] == "gemm" and not r["subfamily"])
    assert (gemm["calls"], gemm["total_ns"]) == ("2", str(4 * MS))


def test_timeline_has_no_row_starting_at_end(edges, capsys):
    """Fails on the old code: the NVTX range 'after', the memset, kernel and memcpy at 20 ms
    were rows. The gap from the last operation to 20 ms starts in the window: a row."""
    rows = _csv(capsys, ["timeline", str(edges), *WINDOW])
    starts = [int(r["start_ns"]) for r in rows]
    assert max(starts) < E
    assert {r["name"] for r in rows if r["kind"] == "nvtx"} == {"before"}
    assert [r["kind"] for r in rows if int(r["start_ns"]) + int(r["duration_ns"]) == S] == [
        "memset", "kernel", "nvtx", "memcpy"
    ]  # fmt: skip


# nsys analyze 2022.4 -r RULE:start=10000000:end=20000000 on the edges export: (Duration,
# Start) of every row; gpu-starv with gap=1 (ms)
NSYS_ROWS = {
    "gpu_gaps": [(2 * MS, S), (2 * MS, S + 4 * MS)],
    "sync_memcpy": [(MS, S - MS), (MS, S + 6 * MS)],
    "sync_memset": [(3 * MS, S - 3 * MS), (MS // 2, S + 8 * MS)],
    "sync_api": [(MS, S - MS)],
}
NSYS_RULES = {
    "gpu_gaps": "gpu-starv:gap=1",
    "sync_memcpy": "cuda-sync-memcpy",
    "sync_memset": "cuda-sync-memset",
    "sync_api": "cuda-sync-api",
}


def _findings(edges, capsys) -> dict[str, list[tuple[int, int]]]:
    args = ["findings", str(edges), *WINDOW, "--threshold", "gpu_gaps.gap_ms=1"]
    for rule in NSYS_ROWS:
        args += ["--rule", rule]
    found: dict[str, list[tuple[int, int]]] = {rule: [] for rule in NSYS_ROWS}
    for r in _csv(capsys, args):
        found[r["rule"]].append((int(r["duration_ns"]), int(r["start_ns"])))
    return {rule: sorted(rows) for rule, rows in found.items()}


def test_findings_rows_are_nsys_analyze_rows(edges, capsys):
    """Fails on the old code: the copy, memset and sync call at 20 ms were rows, and the
    gap from 18.5 ms to the operations at 20 ms too."""
    assert _findings(edges, capsys) == {k: sorted(v) for k, v in NSYS_ROWS.items()}


@pytest.mark.skipif(NSYS is None, reason="needs nsys 2022.4 (nsys analyze) on the PATH")
def test_nsys_analyze_agrees(edges, capsys, tmp_path):
    """The rows above are nsys's: nsys analyze on a copy of the export (it writes nothing
    beside its input when reading an .sqlite, but the fixture stays untouched anyway)."""
    copy = tmp_path / "edges.sqlite"
    shutil.copyfile(edges, copy)
    live = {}
    for rule, nsys_rule in NSYS_RULES.items():
        out = subprocess.run(
            [NSYS, "analyze", "-r", f"{nsys_rule}:start={S}:end={E}", "-f", "csv", str(copy)],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        lines = [line for line in out.splitlines() if line and not line.startswith("Processing")]
        rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
        live[rule] = sorted((int(r["Duration (ns)"]), int(r["Start (ns)"])) for r in rows)
    assert live == {k: sorted(v) for k, v in NSYS_ROWS.items()}
    assert _findings(edges, capsys) == live


def test_diff_totals_count_the_window_by_nsys_rule(edges, capsys):
    """The diff's totals (trace_totals.sql, util_calls.window_figures): fails on the old
    code (3 launches, 3 copies, 10 API calls)."""
    side = ["--a-start", str(S), "--a-end", str(E), "--b-start", str(S), "--b-end", str(E)]
    code, out, err = run_cli(["diff", str(edges), str(edges), *side, "--no-cache", "-f", "json"],
                             capsys)  # fmt: skip
    assert code == 0, err
    got = {t["metric"]: (t["a"], t["b"]) for t in json.loads(out)["totals"]}
    counts = ("kernel launches", "memcpy count", "memset count", "CUDA API calls")
    assert [got[k] for k in counts] == [(2, 2), (2, 2), (2, 2), (9, 9)]


def test_window_ending_where_the_trace_starts_is_outside_it(edges, capsys):
    """A window that ends at the first event's start (the first memset's cudaMemset call)
    holds nothing: the hint says why. Fails on the old code (no hint: the window met the
    trace's span)."""
    first = S - 3 * MS - 1000
    code, _, err = run_cli(["census", str(edges), "--end", str(first), "--no-cache"], capsys)
    assert "is outside the trace's span" in err, (code, err)


def test_util_figures_are_unchanged(edges):
    """util clips the operations to the window: one that starts at --end is left with no
    time, as before; the busy time and idle causes do not move."""
    with tracelens.open(edges, cache=False) as trace:
        frame = trace.util(start=S, end=E).frame
    assert frame.select("span_ns", "busy_ns", "compute_ns", "memory_ns").row(0) == (
        10 * MS, 3_500_000, 2 * MS, 1_500_000
    )  # fmt: skip


# The period fixture of test_stepwork_nvtx: step s's GPU work from 1 ms + s ms + 50 us (a_k)
# to 1 ms + s ms + 650 us + s x 10 us (c_k's end).
def _step_start(s: int) -> int:
    return MS + s * MS + 50_000


def _step_end(s: int) -> int:
    return MS + s * MS + 650_000 + s * 10_000


@pytest.fixture(scope="module")
def period(tmp_path_factory):
    return str(build_period(tmp_path_factory.mktemp("winbound") / "period.sqlite"))


def test_step_starting_at_end_is_outside_the_window(period, capsys):
    """Fails on the old code: step 3's a_k, starting at --end, was its work in the window."""
    code, _, err = run_cli(
        ["census", period, "--step", "3", "--end", str(_step_start(3)), "--no-cache"], capsys
    )
    assert code == 2 and "step 3 is outside the window" in err, err


def test_step_ending_at_start_keeps_its_last_kernel(period, capsys):
    rows = _csv(capsys, ["census", period, "--step", "3", "--start", str(_step_end(3))])
    assert [r["name"] for r in rows] == ["void c_k(float*)"]


def test_steps_in_a_window_leave_out_the_step_starting_at_end(period, capsys):
    """Fails on the old code: step 5, whose work starts at --end, was listed (in part)."""
    window = ["--start", str(_step_start(3)), "--end", str(_step_start(5))]
    rows = _csv(capsys, ["steps", period, *window])
    assert [int(r["step"]) for r in rows] == [3, 4]


def test_selection_keeps_its_last_operation_of_no_duration(tmp_path, capsys):
    """A selection's window is its work's GPU span: an operation of no duration at its end
    starts there, and the span's window still holds it (_selection_span.sql)."""
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.nvtx_range("fwd", start=1_000, end=15_000, pid=PID)
    for s, e in [(10_000, 20_000), (20_000, 20_000)]:
        cid = b.runtime("cudaLaunchKernel_v7000", start=s - 8_000, end=s - 7_000, pid=PID)
        b.kernel(GEMM, start=s, end=e, pid=PID, correlation_id=cid)
    path = b.write(tmp_path / "zero_end.sqlite")
    (row,) = _csv(capsys, ["census", str(path), "--nvtx", "fwd"])
    assert row["instances"] == "2"


@pytest.mark.parametrize("bin_ns", [1, 3_000, 10**6])
def test_timeline_pages_of_a_window_on_event_edges(tmp_path, monkeypatch, bin_ns):
    """Pages of a window that ends exactly where kernels start and starts exactly where
    others end are the slices of the unpaged run (the page's bound is its last ns, the
    window's end the first ns past it), which holds no row starting at the end."""
    from test_timeline_pushdown import PAGES, _adversarial, _pages_equal_slices

    from tracelens import timeline as timeline_module
    from tracelens.filters import EventFilter

    monkeypatch.setattr(timeline_module, "PAGE_BIN_NS", bin_ns)
    with tracelens.open(_adversarial(tmp_path)) as trace:
        ops = trace.timeline(limit=0).events.filter(pl.col("kind") == "kernel")
        starts = sorted(set(ops["start_ns"].to_list()))  # ns from session start
        ends = sorted(set((ops["start_ns"] + ops["duration_ns"]).to_list()))
        t0, t1 = ends[len(ends) // 4], starts[3 * len(starts) // 4]
        for options in ({}, {"api": True, "gap_ns": 0}):
            where = EventFilter(start_ns=t0, end_ns=t1)
            _pages_equal_slices(trace, PAGES, where=where, **options)
            rows = trace.timeline(limit=0, where=where, **options).events
            assert (rows["start_ns"] < t1).all()
            assert ((rows["start_ns"] + rows["duration_ns"]) == t0).any()
