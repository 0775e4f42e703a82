"""--step N / --steps A:B (and step=/steps= in Python): the GPU work launched inside those
steps, through the work selection, on every command that takes the event filter.

The fixtures are built to defeat a time window: the GPU runs behind the host, and a long
kernel on a second stream of step k still runs when step k+1's kernels start; an unrelated
second process launches kernels on the same GPU at the same time, with the same
correlation ids (they are unique per process only); steps differ in length. Expected
values come from what was put in the fixture, not from tracelens."""

from __future__ import annotations

import json

import pytest
from conftest import has_cuda_work, needs_shared, run_cli, shared_traces

import tracelens
from tracelens.errors import UsageError
from tracelens.stepwork import select_steps
from tracelens.synth import TraceBuilder

APP, OTHER = 111, 222
STEPS = 6
# Step i launches LENGTHS[i] short kernels on stream 7 and one long kernel on stream 8.
LENGTHS = {1: 2, 2: 3, 3: 1, 4: 4, 5: 2, 6: 3}
SHORT_NS, LONG_NS = 30_000, 400_000
GAP_STEP, GAP_NS = 4, 900_000  # step 4 waits on the host mid-step: one GPU gap inside it


def build_lagging_steps(path):
    """ProfilerStep#1..6 on APP's main thread; OTHER, on the same GPU, launches one kernel per
    APP launch at the same time with the same correlation id. Returns, per step, the
    kernel names launched inside it, their GPU time, and the memcpy count."""
    b = TraceBuilder("3.0.0")
    b.process(APP, "python train.py")
    b.process(OTHER, "python other.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    t, free = 1_000_000, {7: 0, 8: 0}
    expected = {}

    def launch(name, dur, stream):
        nonlocal t
        cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 5, pid=APP)
        start = max(t + 2_000, free[stream] + 1_000)
        b.kernel(name, start=start, end=start + dur, stream=stream, pid=APP, correlation_id=cid)
        free[stream] = start + dur
        # The other program: same correlation id, its own thread, same GPU, stream 20.
        b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 5, pid=OTHER, correlation_id=cid)
        b.kernel("other_kernel", start=start, end=start + 5_000, stream=20, pid=OTHER,
                 correlation_id=cid)  # fmt: skip
        t += 10_000
        return dur

    for i in range(1, STEPS + 1):
        begin = t
        names, gpu_ns = [], 0
        gpu_ns += launch(f"step{i}_long", LONG_NS, 8)
        names.append(f"step{i}_long")
        for j in range(LENGTHS[i]):
            if i == GAP_STEP and j == 2:
                t = max(free.values()) + GAP_NS  # the host blocks: the GPU drains and waits
            gpu_ns += launch(f"step{i}_k{j}", SHORT_NS, 7)
            names.append(f"step{i}_k{j}")
        memcpys = 0
        if i == 3:
            cid = b.runtime("cudaMemcpyAsync_v3020", start=t, end=t + 5, pid=APP)
            b.memcpy("DtoD", 1 << 20, start=free[7] + 500, end=free[7] + 2_500, stream=7,
                     pid=APP, correlation_id=cid)  # fmt: skip
            memcpys = 1
            t += 10_000
        b.nvtx_range(f"ProfilerStep#{i}", start=begin, end=t, pid=APP)
        t += 20_000  # the next step's range opens while this step's long kernel still runs
        expected[i] = {"names": sorted(names), "gpu_ns": gpu_ns, "memcpys": memcpys}
    b.write(path)
    return expected


def _built(factory, name, build):
    path = factory.mktemp("stepsel") / name
    return path, build(path)


@pytest.fixture(scope="module")
def lagging(tmp_path_factory):
    return _built(tmp_path_factory, "lagging.sqlite", build_lagging_steps)


def _names(frame):
    return sorted(frame["name"].to_list())


def test_the_fixture_defeats_a_time_window(lagging):
    path, _ = lagging
    with tracelens.open(path) as trace:
        frame = trace.steps().frame
        assert trace.steps().method == "marker" and frame.height == STEPS
        # Step 2's GPU projection overlaps step 3's: a window would mix them.
        assert frame["end_ns"][1] > frame["start_ns"][2]
        window = trace.census(start=int(frame["start_ns"][1]), end=int(frame["end_ns"][1]))
        assert any(n.startswith(("step3", "other")) for n in window["name"].to_list())


@pytest.mark.parametrize("step", range(1, STEPS + 1))
def test_census_step_is_the_work_launched_inside(lagging, step):
    path, expected = lagging
    with tracelens.open(path) as trace:
        census = trace.census(step=step)
        frame = trace.steps().frame.filter(step=step)
    assert _names(census) == expected[step]["names"]
    assert census["total_ns"].sum() == expected[step]["gpu_ns"] == frame["kernel_ns"].item()
    assert census["instances"].sum() == frame["kernels"].item()


def test_steps_range_and_forms_of_the_spec(lagging):
    path, expected = lagging
    want = sorted(expected[2]["names"] + expected[3]["names"] + expected[4]["names"])
    with tracelens.open(path) as trace:
        for spec in ("2:4", (2, 4)):
            assert _names(trace.census(steps=spec)) == want
        assert _names(trace.census(step="2:4")) == want
        assert _names(trace.census(step="5")) == expected[5]["names"]
        with pytest.raises(UsageError, match="not both"):
            trace.census(step=1, steps="1:2")
        with pytest.raises(UsageError, match="the trace has steps 1 to 6"):
            trace.census(steps="5:7")
        with pytest.raises(UsageError, match="use N or A:B"):
            trace.census(step="two")


def test_step_messages_name_the_parameter_then_the_flag(lagging, capsys):
    """The library says step/steps (its keywords), the command line its flags."""
    path, _ = lagging
    with tracelens.open(path) as trace:
        with pytest.raises(UsageError) as exc:
            trace.census(step="two")
        assert str(exc.value) == "step 'two': use N or A:B (1-based step numbers)"
        with pytest.raises(UsageError) as exc:
            trace.census(steps="3:2")
        assert str(exc.value) == "steps '3:2': need 1 <= A <= B"
        with pytest.raises(UsageError) as exc:
            trace.census(steps="9:9")
        assert str(exc.value) == f"{path}: step 9: the trace has steps 1 to 6"
    rc, out, err = run_cli(["census", str(path), "--step", "two"], capsys)
    assert (rc, out, err) == (
        2,
        "",
        "tracelens: step (--step or --steps) 'two': use N or A:B (1-based step numbers)\n",
    )
    # click does not say which of the option's two flags was typed: the message names
    # both as alternatives, true either way (it said "--steps" after --step 3:2)
    for flag in ("--steps", "--step"):
        rc, out, err = run_cli(["census", str(path), flag, "3:2"], capsys)
        assert (rc, out, err) == (
            2,
            "",
            "tracelens: steps (--step or --steps) '3:2': need 1 <= A <= B\n",
        )


def test_selection_object(lagging):
    path, _ = lagging
    with tracelens.open(path) as trace:
        chosen = select_steps(trace, "2:3")
        frame = trace.steps().frame
    assert (chosen.first, chosen.last, chosen.selected, chosen.steps.count) == (2, 3, 2, STEPS)
    # The window is the selected work's GPU span (util's span), not the CPU ranges.
    assert chosen.where.start_ns == frame["start_ns"][1]
    assert chosen.where.end_ns == max(frame["end_ns"][1], frame["end_ns"][2])
    assert chosen.note() == (
        "only the GPU work of steps 2 to 3 of 6 (steps from 6 NVTX ranges 'ProfilerStep#*' "
        "(step markers))"
    )


def test_memory_and_util_follow_the_step(lagging):
    path, expected = lagging
    with tracelens.open(path) as trace:
        assert trace.memory_time(step=3)["count"].sum() == 1
        assert trace.memory_time(step=2).is_empty()
        for step in (2, GAP_STEP):
            row = trace.steps().frame.filter(step=step).row(0, named=True)
            util = trace.util(step=step).frame.row(0, named=True)
            # util's span is the step's GPU projection, its busy the step's busy time.
            assert (util["span_ns"], util["busy_ns"]) == (row["duration_ns"], row["busy_ns"])
    assert expected[3]["memcpys"] == 1


def test_findings_follow_the_step(lagging):
    path, _ = lagging
    limits = {("gpu_gaps", "gap_ms"): GAP_NS / 2 / 1e6}
    with tracelens.open(path) as trace:
        inside = trace.findings(step=GAP_STEP, only=("gpu_gaps",), thresholds=limits)
        other = trace.findings(step=2, only=("gpu_gaps",), thresholds=limits)
        span = trace.steps().frame.filter(step=GAP_STEP).row(0, named=True)
    gaps = inside.result("gpu_gaps").frame
    # The host-blocked wait (its kernel starts 2 us after the launch) is among them, and
    # every gap lies inside step 4's GPU span; step 2 has none.
    assert GAP_NS + 2_000 in gaps["duration_ns"].to_list()
    assert set(gaps["pid"].to_list()) == {APP}
    assert all(span["start_ns"] <= s < span["end_ns"] for s in gaps["start_ns"].to_list())
    assert other.result("gpu_gaps").frame.is_empty()


def test_nvtx_and_step_intersect(lagging):
    path, expected = lagging
    with tracelens.open(path) as trace:
        both = trace.census(nvtx="ProfilerStep#[34]", steps="3:4")
        # Step numbers stay those of the whole trace (6 steps): steps 1 and 5 hold none of
        # the --nvtx work, and step 7 is past the trace's last.
        for step in (1, 5):
            with pytest.raises(UsageError, match=f"none of the GPU work of step {step} is in"):
                trace.census(nvtx="ProfilerStep#[34]", step=step)
        with pytest.raises(UsageError, match="the trace has steps 1 to 6"):
            trace.census(nvtx="ProfilerStep#[34]", step=7)
    assert _names(both) == sorted(expected[3]["names"] + expected[4]["names"])


@pytest.mark.parametrize(
    "command",
    [
        ["census"],
        ["lineup"],
        ["danger"],
        ["stakeout", "step"],
        ["timeline"],
        ["memory"],
        ["util"],
        ["findings"],
        ["decode", "--trace"],
    ],
)
def test_every_command_takes_step(lagging, capsys, command):
    path, _ = lagging
    args = [command[0], *command[1:], str(path)] if command[0] == "decode" else [
        command[0], str(path), *command[1:]]  # fmt: skip
    rc, out, err = run_cli([*args, "--steps", "2:3"], capsys)
    assert rc == 0, err
    assert "note: only the GPU work of steps 2 to 3 of 6 (steps from 6 NVTX ranges" in out
    if command[0] in ("census", "stakeout", "timeline", "lineup"):
        assert "step1_" not in out and "step4_" not in out and "other_kernel" not in out
    rc, out, err = run_cli([*args, "--step", "9"], capsys)
    assert (rc, out) == (2, "")
    assert err.endswith("--step 9: the trace has steps 1 to 6\n") and err.count("\n") == 1


def test_cli_machine_formats_keep_stdout_data(lagging, capsys):
    path, expected = lagging
    rc, out, err = run_cli(["census", str(path), "--step", "4", "-f", "json"], capsys)
    assert rc == 0
    assert sorted(r["name"] for r in json.loads(out)) == expected[4]["names"]
    assert err.startswith("tracelens: note: only the GPU work of step 4 of 6")
    rc, out, err = run_cli(["census", str(path), "--step", "0:2"], capsys)
    assert (rc, out) == (2, "") and "need 1 <= A <= B" in err


# -- steps from the period of the launch sequence ------------------------------------------
MOTIF = ("gemm", "fill", "attn", "gemm", "reduce")
SCALES = (1.0, 1.5, 1.0, 2.0, 1.0, 1.2, 1.0, 3.0)


def build_period_steps(path, scales=SCALES):
    """No NVTX: each step launches MOTIF, the first kernel long on stream 8 while the others
    run on stream 7 (overlapping streams), plus one memcpy; steps of different lengths,
    an idle gap between steps, and a second device with one kernel per step."""
    b = TraceBuilder("3.0.0")
    b.process(APP, "python loop.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    b.gpu(1, "NVIDIA H100 80GB HBM3")
    t = 1_000_000
    expected = []
    for scale in scales:
        per_step = {"kernels": 0, "gpu_ns": 0, "gemm_ns": 0}
        gpu, end = t + 2_000, 0
        for k, name in enumerate(MOTIF):
            long = k == 0
            dur = int((90_000 if long else 20_000) * scale)
            cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 5, pid=APP)
            b.kernel(name, start=gpu, end=gpu + dur, stream=8 if long else 7, pid=APP,
                     correlation_id=cid)  # fmt: skip
            per_step["kernels"] += 1
            per_step["gpu_ns"] += dur
            per_step["gemm_ns"] += dur if name == "gemm" else 0
            end = max(end, gpu + dur)
            if k == 2:
                cid = b.runtime("cudaMemcpyAsync_v3020", start=t + 6, end=t + 9, pid=APP)
                b.memcpy("DtoH", 4096, start=gpu + dur + 10, end=gpu + dur + 300, stream=7,
                         pid=APP, correlation_id=cid)  # fmt: skip
            gpu += 500 if long else dur + 500
            t += 10
        expected.append(per_step)
        t = max(end, gpu) + 50_000  # idle: the host prepares the next step
        cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 5, pid=APP)
        b.kernel("dev1_kernel", start=t + 100, end=t + 200, device=1, pid=APP, correlation_id=cid)
    b.write(path)
    return expected


@pytest.fixture(scope="module")
def periodic(tmp_path_factory):
    return _built(tmp_path_factory, "period.sqlite", build_period_steps)


def test_period_steps_select_their_slice(periodic):
    path, expected = periodic
    with tracelens.open(path) as trace:
        steps = trace.steps()
        assert steps.method == "period" and steps.count == len(SCALES)
        assert set(steps.frame["device"].to_list()) == {0}  # device 1 has no motif
        for k, want in enumerate(expected, start=1):
            census = trace.census(step=k)
            assert census["instances"].sum() == want["kernels"] == 5
            assert census["total_ns"].sum() == want["gpu_ns"]
            assert trace.memory_time(step=k)["count"].sum() == 1
        two = trace.census(steps="7:8")
        assert two["instances"].sum() == 10
        assert two["total_ns"].sum() == expected[6]["gpu_ns"] + expected[7]["gpu_ns"]
        # Device 1's work is in no step: not selected, also with --device 1 (the trace's
        # steps, intersected with the filter; they were searched on device 1 alone).
        assert "dev1_kernel" not in trace.census(steps="1:8")["name"].to_list()
        with pytest.raises(UsageError, match="steps 1 to 8 launched no GPU work that passes"):
            trace.census(steps="1:8", device=1)


def test_census_per_step(periodic, capsys):
    path, expected = periodic
    with tracelens.open(path) as trace:
        rows = {r["name"]: r for r in trace.census(per_step=True).iter_rows(named=True)}
        two = {r["name"]: r for r in trace.census(per_step=True, steps="3:4").iter_rows(named=True)}
    gemm = sum(s["gemm_ns"] for s in expected)
    assert rows["gemm"]["per_step_ns"] == gemm / len(SCALES)
    assert rows["gemm"]["calls_per_step"] == 2.0 and rows["attn"]["calls_per_step"] == 1.0
    assert "dev1_kernel" not in rows  # outside every step
    assert two["gemm"]["per_step_ns"] == (expected[2]["gemm_ns"] + expected[3]["gemm_ns"]) / 2
    rc, out, err = run_cli(["census", str(path), "--per-step", "--steps", "3:4"], capsys)
    assert rc == 0, err
    assert "Per step (ns)" in out and "Calls per step" in out
    assert out.rstrip().endswith(
        "note: per step: the GPU work of steps 3 to 4 of 8, divided by 2 (steps from the period "
        "of the kernel launch sequence (device 0: a motif of 5 kernels))"
    )


def test_per_step_sets_the_warmup_aside(tmp_path, capsys):
    scales = (6.0, 1.0, 1.0, 1.1, 1.0, 1.0, 1.0)
    path = tmp_path / "warm.sqlite"
    expected = build_period_steps(path, scales)
    with tracelens.open(path) as trace:
        assert trace.steps().summary()["warmup_steps"] == [1]
        rows = {r["name"]: r for r in trace.census(per_step=True).iter_rows(named=True)}
    assert rows["gemm"]["per_step_ns"] == sum(s["gemm_ns"] for s in expected[1:]) / 6
    rc, out, err = run_cli(["census", str(path), "--per-step", "-f", "csv"], capsys)
    assert rc == 0 and out.startswith("time_pct,per_step_ns,calls_per_step,avg_ns")
    assert err == (
        "tracelens: note: per step: the GPU work of steps 2 to 7 of 7, divided by 6 (steps "
        "from the period of the kernel launch sequence (device 0: a motif of 5 kernels); "
        "warm-up step 1 set aside)\n"
    )
    rc, out, err = run_cli(["census", str(path), "--per-step", "--steps", "1:2"], capsys)
    assert rc == 0 and "divided by 2" in out and "warm-up step 1 included" in out


def test_a_trace_without_steps_says_why(tmp_path, capsys):
    b = TraceBuilder("3.0.0")
    b.process(APP, "python once.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    for i, name in enumerate(["a", "b", "c"]):
        cid = b.runtime("cudaLaunchKernel_v7000", start=1000 + i * 100, end=1005 + i * 100)
        b.kernel(name, start=5000 + i * 1000, end=5500 + i * 1000, correlation_id=cid)
    path = b.write(tmp_path / "flat.sqlite")
    for option in (["--step", "1"], ["--per-step"]):
        rc, out, err = run_cli(["census", str(path), *option], capsys)
        assert (rc, out) == (2, "")
        assert "no steps to select: no step structure found" in err and err.count("\n") == 1


@needs_shared
@pytest.mark.parametrize("path", shared_traces(), ids=lambda p: p.stem)
def test_every_shared_trace(trace_copies, capsys, path):
    """Step 1's census is the kernels the steps table counts for step 1; a trace without
    steps says why (exit 2); one without CUDA data exits 3."""
    copy = str(trace_copies[path.stem])
    rc, out, err = run_cli(["census", copy, "--step", "1", "-f", "json"], capsys)
    if not has_cuda_work(path):
        assert rc == 3 and out == "", err
        return
    with tracelens.open(copy) as trace:
        if not trace.has_table("CUPTI_ACTIVITY_KIND_KERNEL"):
            assert rc == 3, err
            return
        steps = trace.steps()
    if not steps.count:
        assert rc == 2 and "no steps to select" in err, err
        return
    first = steps.frame.filter(step=1)
    if first.is_empty():
        assert rc == 2 and "launched no GPU work" in err, err
        return
    assert rc == 0, err
    rows = json.loads(out)
    assert sum(r["instances"] for r in rows) == first["kernels"].sum()
    assert sum(r["total_ns"] for r in rows) == first["kernel_ns"].sum()
    import polars as pl

    with tracelens.open(copy) as trace:
        # Every kernel of every step, per step and device: the steps table's kernel time.
        top = trace.steps(top_kernels=1_000_000).top_kernels
        per = top.group_by("step", "device").agg(pl.col("total_ns").sum(), pl.col("calls").sum())
        both = steps.frame.join(per, on=["step", "device"], how="left")
        assert both["total_ns"].to_list() == both["kernel_ns"].to_list()
        assert both["calls"].to_list() == both["kernels"].to_list()
        # One device: util's span over step 1 is the step's duration. (With graph-level CUDA
        # graph replays, a period step's table covers its kernels only, while its work, and
        # so util's span, includes the replay launched between them.)
        if first.height == 1 and not trace.graph_replays()[0]:
            util = trace.util(step=1).frame.row(0, named=True)
            assert util["span_ns"] == first["duration_ns"].item()


# -- what runs in each step, and the pacing ------------------------------------------------
def test_top_kernels_per_step(lagging, periodic):
    from tracelens.stepwork import step_report

    path, expected = lagging
    with tracelens.open(path) as trace:
        top = step_report(trace, top_kernels=2).top_kernels
    first = top.filter(rank=1)
    assert first["name"].to_list() == [f"step{i}_long" for i in range(1, STEPS + 1)]
    for i in range(1, STEPS + 1):
        share = 100 * LONG_NS / expected[i]["gpu_ns"]
        assert first.filter(step=i)["time_pct"].item() == round(share, 1)
    assert top.group_by("step").len()["len"].max() == 2
    path, expected = periodic
    with tracelens.open(path) as trace:
        top = step_report(trace, top_kernels=1).top_kernels
        assert trace.steps(top_kernels=1).top_kernels.equals(top)
        assert trace.steps().top_kernels is None
    assert top["name"].to_list() == ["gemm"] * len(SCALES) and set(top["calls"]) == {2}
    assert top["total_ns"].to_list() == [s["gemm_ns"] for s in expected]


def test_pacing():
    import polars as pl

    from tracelens.steps import Steps
    from tracelens.stepwork import pacing

    def steps(durations, devices=1):
        rows = [
            {"step": i + 1, "device": d, "duration_ns": dur if d == 0 else dur // 2}
            for i, dur in enumerate(durations)
            for d in range(devices)
        ]
        schema = {"step": pl.Int64, "device": pl.Int64, "duration_ns": pl.Int64}
        return Steps("period", "", pl.DataFrame(rows, schema=schema))

    assert pacing(steps([8, 8, 4, 8, 1])) == "██▅█▂"
    assert pacing(steps([8, 8, 4, 8, 1], devices=2)) == "██▅█▂"  # the slowest device
    # More steps than the width: each mark is the slowest of its run of steps.
    assert pacing(steps([1] * 95 + [10] + [1] * 4), width=10) == "▁" * 9 + "█"
    assert pacing(steps([])) == ""


def test_steps_command_shows_pacing_and_top_kernels(lagging, capsys):
    path, _ = lagging
    rc, out, err = run_cli(["steps", str(path), "--kernels", "1"], capsys)
    assert rc == 0, err
    assert "\npacing (step time in order, from 0 to the slowest step): " in out
    assert "top kernels per step" in out and "step4_long" in out
    assert "the kernel with the most time per step and device" in out
    rc, out, _ = run_cli(["steps", str(path), "--kernels", "0"], capsys)
    assert "top kernels per step" not in out
    rc, out, _ = run_cli(["steps", str(path), "-f", "json"], capsys)
    doc = json.loads(out)
    assert len(doc["pacing"]) == STEPS
    assert len(doc["top_kernels"]) == sum(min(3, n + 1) for n in LENGTHS.values())
    rc, out, err = run_cli(["steps", str(path), "--kernels", "-1"], capsys)
    assert (rc, out) == (2, "") and "--kernels" in err


def test_steps_csv_does_not_compute_the_top_kernels(lagging, capsys, monkeypatch):
    """CSV is the steps table alone: the top kernels, which it never prints, are not
    queried (the table and JSON query them)."""
    from tracelens.trace import Trace

    path, _ = lagging
    queries: list[str] = []
    query = Trace.query

    def recorded(trace, name, **params):
        queries.append(name)
        return query(trace, name, **params)

    monkeypatch.setattr(Trace, "query", recorded)
    rc, table, err = run_cli(["steps", str(path), "--kernels", "1"], capsys)
    assert rc == 0, err
    # ranked from the kernel totals the step search counted (steps_range_kernel_ranks), or
    # by a pass over the calls and kernels (steps_range_top_kernels)
    ranking = {"steps_range_kernel_ranks", "steps_range_top_kernels"}
    assert ranking & set(queries)
    queries.clear()
    rc, out, err = run_cli(["steps", str(path), "--kernels", "1", "-f", "csv"], capsys)
    assert rc == 0, err
    assert not ranking & set(queries) and "steps_by_range" not in queries
    assert out.splitlines()[0].startswith("step,device,") and "step4_long" not in out
    rc, bare, _ = run_cli(["steps", str(path), "--kernels", "0", "-f", "csv"], capsys)
    assert bare == out


def test_findings_and_util_honour_nvtx(lagging, capsys):
    path, expected = lagging
    gaps = ["findings", str(path), "--rule", "gpu_gaps", "--threshold", "gpu_gaps.gap_ms=0.45"]
    rc, out, err = run_cli([*gaps, "--nvtx", f"ProfilerStep#{GAP_STEP}", "-f", "csv"], capsys)
    assert rc == 0, err
    assert f",{GAP_NS + 2_000}," in out  # the host-blocked gap inside step 4
    assert err.startswith(
        f"tracelens: note: only the GPU work launched inside the 1 NVTX range matching "
        f"'ProfilerStep#{GAP_STEP}'"
    )
    rc, out, _ = run_cli([*gaps, "--nvtx", "ProfilerStep#2", "-f", "csv"], capsys)
    assert rc == 0 and out.count("\n") == 1  # the header only
    with tracelens.open(path) as trace:
        busy = trace.util(nvtx="ProfilerStep#2").frame["busy_ns"].item()
    # Step 2's kernels do not overlap one another: busy is their summed time.
    assert busy == expected[2]["gpu_ns"]


def test_diff_step_compares_step_with_step(capsys):
    from tracelens.demo import demo_path

    kernels = []
    for name in ("bs1", "bs16"):
        with tracelens.open(demo_path(name)) as trace:
            kernels.append(trace.steps().frame.filter(step=2)["kernels"].sum())
    rc, out, err = run_cli(["diff", "--demo", "--step", "2", "-f", "json"], capsys)
    assert rc == 0, err
    doc = json.loads(out)
    assert [doc["figures"]["launches_a"], doc["figures"]["launches_b"]] == kernels
    assert doc["notes"][0].startswith("A: only the GPU work of step 2 of 4 (steps from")
    assert doc["notes"][1].startswith("B: only the GPU work of step 2 of 4 (steps from")
