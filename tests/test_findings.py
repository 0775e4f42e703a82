"""tracelens findings: `nsys analyze` 2022.4 parity on every shared trace (same rows, value
for value; a skipped rule where nsys skipped it), and each rule on a trace built to trip it."""

from __future__ import annotations

import csv
import json

import pytest
from conftest import REFERENCE, needs_shared, run_cli, shared_traces
from fixtures.builder import XMMA_GEMM, add_graph_replays
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracelens
from tracelens.cli import main
from tracelens.errors import UsageError
from tracelens.findings import find_issues, parse_threshold, rules
from tracelens.synth import TraceBuilder, global_pid

NSYS_RULES = {r["nsys"]: r["id"] for r in rules() if "nsys" in r}
# Reference header -> our column; nsys prints percentages with one decimal, MB with three.
COLUMNS = {
    "Row#": "row",
    "In-Use (%)": "in_use_pct",
    "Duration (ns)": "duration_ns",
    "Start (ns)": "start_ns",
    "PID": "pid",
    "TID": "tid",
    "Device ID": "device",
    "Context ID": "context",
    "Stream ID": "stream",
    "Src Kind": "src_kind",
    "Dst Kind": "dst_kind",
    "Memory Kind": "memory_kind",
    "Bytes (MB)": "bytes_mb",
    "API Name": "api_name",
}
ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)"
PID = 3131
MS = 1_000_000


def _printed(column: str, value) -> str:
    if value is None:
        return ""
    if column == "in_use_pct":
        return f"{value:.1f}"
    if column == "bytes_mb":
        return f"{value:.3f}"
    return str(value)


def _as_nsys(frame, header):
    rows = []
    for i, row in enumerate(frame.iter_rows(named=True), start=1):
        row["row"] = i
        rows.append([_printed(COLUMNS[h], row[COLUMNS[h]]) for h in header])
    return rows


@needs_shared
@pytest.mark.parametrize("path", shared_traces(), ids=lambda p: p.stem)
def test_nsys_analyze_parity(trace_copies, path):
    copy = trace_copies[path.stem]
    with tracelens.open(copy) as trace:
        found = find_issues(trace, only=tuple(NSYS_RULES.values()))
    if not any(REFERENCE.glob(f"{path.stem}_analyze_*.csv")):
        # nsys analyze has nothing to look at in an export without CUDA data.
        assert all(r.skipped for r in found.results)
        return
    for nsys_rule, rule in NSYS_RULES.items():
        ref = REFERENCE / f"{path.stem}_analyze_{nsys_rule}.csv"
        result = found.result(rule)
        if not ref.exists():
            assert result.skipped, f"{rule}: nsys skipped it, tracelens ran it"
            continue
        assert result.skipped is None, f"{rule}: {result.skipped}"
        rows = list(csv.reader(ref.read_text().splitlines()))
        if not rows:
            assert result.total == 0, f"{rule}: nsys found nothing"
            continue
        assert _as_nsys(result.frame, rows[0]) == rows[1:], f"{rule} differs from nsys"


@pytest.fixture(scope="module")
def tripped(tmp_path_factory):
    """One of everything: a synchronous DtoH copy (and a small HtoD one nsys ignores), a
    pageable cudaMemcpyAsync, a synchronous memset of managed memory (and an async one), a
    cudaDeviceSynchronize while a kernel runs, a 600 ms launch-bound gap, and 100 ms of
    all-reduce alone."""
    b = TraceBuilder("3.0.0")
    b.process(PID, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    t = 100 * MS

    def call(name, at, dur=10_000):
        return b.runtime(name, start=at, end=at + dur, pid=PID)

    b.kernel(
        XMMA_GEMM,
        start=t,
        end=t + 50 * MS,
        correlation_id=call("cudaLaunchKernel_v7000", t - 10_000),
    )
    cid = call("cudaMemcpy_v3020", t + 50 * MS, 2 * MS)
    b.memcpy("DtoH", 4_000_000, start=t + 50 * MS + 1000, end=t + 51 * MS, correlation_id=cid)
    cid = call("cudaMemcpy_v3020", t + 52 * MS)
    b.memcpy("HtoD", 1_000, start=t + 52 * MS + 1000, end=t + 52 * MS + 3000, correlation_id=cid)
    cid = call("cudaMemcpyAsync_v3020", t + 53 * MS)
    b.memcpy("HtoD", 2_000_000, start=t + 53 * MS + 1000, end=t + 54 * MS, correlation_id=cid)
    cid = call("cudaMemset_v3020", t + 55 * MS)
    b.memset(1_000_000, start=t + 55 * MS + 1000, end=t + 56 * MS, mem_kind=4, correlation_id=cid)
    cid = call("cudaMemsetAsync_v3020", t + 57 * MS)
    b.memset(1_000_000, start=t + 57 * MS + 1000, end=t + 58 * MS, mem_kind=4, correlation_id=cid)
    call("cudaDeviceSynchronize_v3020", t + 10 * MS, 3 * MS)  # while the GEMM runs
    # The host comes back only after 600 ms: a gap, launch-bound (no sync during it).
    at = t + 660 * MS
    b.kernel(
        ALLREDUCE,
        start=at + 20_000,
        end=at + 100 * MS,
        correlation_id=call("cudaLaunchKernel_v7000", at),
    )
    path = tmp_path_factory.mktemp("findings") / "tripped.sqlite"
    b.write(path)
    return path


def test_copies_are_matched_to_the_call_of_their_own_process(tmp_path):
    """Correlation ids are unique per process only: a synchronous cudaMemcpy in one process
    must not claim another process's asynchronous copy that reuses its id (nor the reverse)."""
    b = TraceBuilder("3.0.0")
    t = 100 * MS
    b.runtime("cudaMemcpy_v3020", start=t, end=t + 2 * MS, pid=PID, correlation_id=7)
    b.memcpy("DtoH", 4_000_000, start=t + 1000, end=t + MS, pid=PID, correlation_id=7)
    other = PID + 1
    b.runtime("cudaMemcpyAsync_v3020", start=t, end=t + 10_000, pid=other, correlation_id=7)
    b.memcpy(
        "DtoH", 2_000_000, start=t + 2 * MS, end=t + 3 * MS, pid=other, correlation_id=7,
        dst_kind="pageable",
    )  # fmt: skip
    path = b.write(tmp_path / "two_processes.sqlite")
    with tracelens.open(path) as trace:
        found = find_issues(trace)
    sync = found.result("sync_memcpy").frame
    assert (sync["pid"].to_list(), sync["api_name"].to_list()) == ([PID], ["cudaMemcpy_v3020"])
    pageable = found.result("pageable_async_memcpy").frame
    assert (pageable["pid"].to_list(), pageable["api_name"].to_list()) == (
        [other],
        ["cudaMemcpyAsync_v3020"],
    )


def test_every_rule_fires(tripped):
    with tracelens.open(tripped) as trace:
        found = find_issues(trace)
    assert set(found.fired) == {r["id"] for r in rules()}
    memcpy = found.result("sync_memcpy").frame.row(0, named=True)
    assert (memcpy["src_kind"], memcpy["dst_kind"], memcpy["bytes_mb"]) == (
        "Device",
        "Pageable",
        4.0,
    )
    assert found.result("sync_memcpy").total == 1  # the 1 kB HtoD copy returns early
    assert found.result("pageable_async_memcpy").frame["api_name"].to_list() == [
        "cudaMemcpyAsync_v3020"
    ]
    assert found.result("sync_memset").frame["memory_kind"].to_list() == ["Managed"]
    assert found.result("sync_api").frame["duration_ns"].to_list() == [3 * MS]
    gap = found.result("gpu_gaps").frame.row(0, named=True)
    assert gap["start_ns"] == 100 * MS + 58 * MS and gap["duration_ns"] == 602 * MS + 20_000
    # The long gap, plus the 1 ms gaps before the two memsets: their launches came late
    # too, and the synchronous cudaMemset is its own launch (no sync blocked the host before
    # it). The gap before the async copy is sync: the host sat in the 1 kB cudaMemcpy.
    bound = found.result("launch_bound").frame.row(0, named=True)
    assert bound["duration_ns"] == gap["duration_ns"] + 2 * (MS + 1000)
    assert found.result("exposed_communication").frame["duration_ns"].to_list() == [
        100 * MS - 20_000
    ]
    assert found.frame["rule"].unique().len() == len(found.fired)


def test_thresholds_and_limit(tripped):
    with tracelens.open(tripped) as trace:
        high = find_issues(trace, only=("gpu_gaps",), thresholds={("gpu_gaps", "gap_ms"): 700})
        low = find_issues(trace, only=("gpu_gaps",), thresholds={("gpu_gaps", "gap_ms"): 0})
        one = find_issues(
            trace, only=("gpu_gaps",), thresholds={("gpu_gaps", "gap_ms"): 0}, limit=1
        )
    assert high.fired == () and low.result("gpu_gaps").total >= 4
    assert one.result("gpu_gaps").frame.height == 1 and one.result("gpu_gaps").total >= 4
    assert parse_threshold("gpu_gaps.gap_ms=100") == ("gpu_gaps", "gap_ms", 100.0)
    for bad in ("gpu_gaps=1", "nope.gap_ms=1", "gpu_gaps.gap_ms=x", "sync_api.x=1"):
        with pytest.raises(UsageError):
            parse_threshold(bad)


def test_threshold_messages_name_the_parameter_then_the_flag(tripped, capsys):
    """The library names its parameter (threshold), the command line its flag."""
    with pytest.raises(UsageError) as exc:
        parse_threshold("gpu_gaps.gap_ms=x")
    assert str(exc.value) == "threshold 'gpu_gaps.gap_ms=x': 'x' is not a number"
    with pytest.raises(UsageError) as exc:
        parse_threshold("gpu_gaps.gap_ms=-1")
    assert str(exc.value) == "threshold 'gpu_gaps.gap_ms=-1': must not be negative"
    rc, out, err = run_cli(["findings", str(tripped), "--threshold", "gpu_gaps.gap_ms=x"], capsys)
    assert (rc, out, err) == (
        2,
        "",
        "tracelens: --threshold 'gpu_gaps.gap_ms=x': 'x' is not a number\n",
    )
    rc, out, err = run_cli(["findings", str(tripped), "--threshold", "gpu_gaps=1"], capsys)
    assert (rc, out) == (2, "")
    assert err.startswith("tracelens: --threshold 'gpu_gaps=1': use RULE.KEY=VALUE with one of ")


def test_cli_csv_and_fail_on(tripped, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["findings", str(tripped), "-f", "csv", "--fail-on", "sync_api"])
    assert exit_info.value.code == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0].startswith("rule,")
    assert "sync_api found something" in captured.err
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "findings",
                str(tripped),
                "--rule",
                "sync_memset",
                "--fail-on",
                "sync_api",
                "-f",
                "json",
            ]
        )
    # the gated rule was not run: the gate looked at nothing, so it does not pass
    assert exit_info.value.code == 3
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert [d["rule"] for d in doc] == ["sync_memset"] and doc[0]["total"] == 1
    assert "sync_api could not look: it was not run (the rules run: sync_memset)" in captured.err
    with pytest.raises(SystemExit) as exit_info:
        main(["findings", str(tripped), "--fail-on", "nope"])
    assert exit_info.value.code == 2


def test_skipped_rules_say_why(tmp_path):
    b = TraceBuilder("3.0.0")
    b.process(PID, "a.out")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    b.kernel(XMMA_GEMM, start=1_000, end=2_000)
    b.write(tmp_path / "kernels_only.sqlite")
    with tracelens.open(tmp_path / "kernels_only.sqlite") as trace:
        found = find_issues(trace)
    assert "CUPTI_ACTIVITY_KIND_MEMCPY" in found.result("sync_memcpy").skipped
    assert found.result("gpu_gaps").skipped is None


def _nsys_gaps(ops, gap_ns):
    """gpu-starv as nsys analyze 2022.4 computes it: per (pid, device), the j-th end in end
    order and the (j+1)-th start in start order bound a gap when the end comes first."""
    out = []
    for key in sorted({(o[0], o[1]) for o in ops}):
        mine = [o for o in ops if (o[0], o[1]) == key]
        starts = sorted(o[2] for o in mine)
        ends = sorted(o[3] for o in mine)
        for j in range(len(mine) - 1):
            if ends[j] < starts[j + 1] and starts[j + 1] - ends[j] > gap_ns:
                out.append((starts[j + 1] - ends[j], ends[j], key[0], key[1]))
    return sorted(out, key=lambda r: (-r[0], r[1]))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ops=st.lists(
        st.tuples(
            st.sampled_from([PID, PID + 1]),  # process
            st.integers(0, 1),  # device
            st.integers(0, 3_000),  # start offset
            st.integers(0, 400),  # duration (0: an instantaneous operation)
        ),
        min_size=1,
        max_size=30,
    ),
    gap_ns=st.sampled_from([0, 50, 300]),
)
def test_gpu_gaps_match_the_nsys_pairing(tmp_path, ops, gap_ns):
    """Overlapping streams, two processes, two devices, zero-length operations: the union
    sweep finds the same gaps as nsys's pairing of the j-th end with the (j+1)-th start."""
    b = TraceBuilder("3.0.0")
    for pid in (PID, PID + 1):
        b.process(pid, "python serve.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    b.gpu(1, "NVIDIA H100 80GB HBM3")
    spans = []
    for i, (pid, device, start, dur) in enumerate(ops):
        s = 1_000_000 + start
        cid = b.runtime("cudaLaunchKernel_v7000", start=s - 500, end=s - 490, pid=pid)
        b.kernel(
            XMMA_GEMM,
            start=s,
            end=s + dur,
            pid=pid,
            device=device,
            stream=7 + i % 3,
            correlation_id=cid,
        )
        spans.append((pid, device, s, s + dur))
    path = b.write(tmp_path / "gaps.sqlite")
    with tracelens.open(path) as trace:
        frame = (
            find_issues(
                trace,
                only=("gpu_gaps",),
                thresholds={("gpu_gaps", "gap_ms"): gap_ns / MS},
                limit=None,
            )
            .result("gpu_gaps")
            .frame
        )
    got = [
        (r["duration_ns"], r["start_ns"], r["pid"], r["device"])
        for r in frame.iter_rows(named=True)
    ]
    assert got == _nsys_gaps(spans, gap_ns)


def test_launch_bound_share_reads_as_a_percentage_like_every_other(tripped, capsys):
    """launch_bound's share column is headed like the other percentages, not by its name."""
    rc, out, _ = run_cli(["findings", str(tripped), "--rule", "launch_bound"], capsys)
    assert rc == 0 and "Share (%)" in out and "Share pct" not in out


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["--start", "0", "--end", "1s"], "window 0 ns–1.00 s is outside the trace's span"),
        (["--pid", "99"], "no GPU work on pid 99; processes present: 48213"),
    ],
)
def test_nothing_found_under_filters_that_select_nothing_says_why(capsys, args, why):
    """Every rule 'nothing found' over a window outside the capture (or a process without
    GPU work) says why on stderr, as census and memory do; before, findings read as a clean
    bill of health for work it never looked at."""
    rc, out, err = run_cli(["findings", "--demo", "bs1", *args, "-f", "json"], capsys)
    assert rc == 0 and all(r["total"] == 0 for r in json.loads(out))
    assert err.startswith("tracelens: " + why) and len(err.splitlines()) == 1


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    """One kernel and a 500 us CUDA graph replay traced at graph level."""
    path = tmp_path_factory.mktemp("replayed") / "replayed.sqlite"
    b = TraceBuilder("3.24.18")
    b.process(PID, "python app.py")
    b.gpu(0)
    cid = b.runtime("cudaLaunchKernel_v7000", start=1_000_000, end=1_001_000, pid=PID)
    b.kernel("k", start=1_002_000, end=1_012_000, correlation_id=cid, pid=PID)
    cid = b.runtime("cudaGraphLaunch_v10000", start=1_100_000, end=1_110_000, pid=PID)
    b.write(path)
    add_graph_replays(path, [(1_150_000, 1_650_000, 0, 1, None, 7, cid, global_pid(PID), 1, 1)])
    return path


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_machine_formats_keep_the_rules_notes_on_stderr(replayed, capsys, fmt):
    """The rules' notes (here: gpu_gaps and gpu_low_util do not count graph replays) are
    the table's last lines, and one 'tracelens: note:' line on stderr for csv and json, as
    every command's notes; before, csv and json dropped them."""
    rc, out, err = run_cli(["findings", replayed], capsys)
    note = "gpu_gaps and gpu_low_util follow nsys analyze 2022.4, which does not count the 1"
    assert rc == 0 and f"\nnote: {note}" in out and err == ""
    rc, out, err = run_cli(["findings", replayed, "-f", fmt], capsys)
    assert rc == 0 and "note" not in out
    assert err.startswith(f"tracelens: note: {note}") and len(err.splitlines()) == 1


def test_sync_api_says_the_device_filter_does_not_narrow_it(capsys):
    """sync_api lists host calls, which have no device: --device (or --stream) keeps them
    all, and a note says so rather than listing them as that device's; before, --device 3
    of a one-GPU trace listed bs1's 5 sync calls without a word."""
    note = (
        "note: sync_api looks at host calls, which have no device or stream: the device and "
        "stream filters do not narrow it (the process and the window do)\n"
    )
    for device in ("0", "3"):
        args = ["findings", "--demo", "bs1", "--rule", "sync_api", "--device", device]
        rc, out, _ = run_cli(args, capsys)
        assert rc == 0 and "host synchronization calls: 5 found" in out
        assert out.endswith(note)
    rc, out, _ = run_cli(["findings", "--demo", "bs1", "--rule", "sync_api"], capsys)
    assert rc == 0 and "note:" not in out
    rc, out, _ = run_cli(
        ["findings", "--demo", "bs1", "--rule", "gpu_gaps", "--device", "0"], capsys
    )
    assert rc == 0 and "note:" not in out
