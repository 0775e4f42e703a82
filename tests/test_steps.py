"""tracelens steps: iterations from NVTX ranges, step markers, or the period of the launch
sequence; warm-up and outliers; abstaining with a reason. Fixtures are built here with
known step structure, and the command runs on every shared real export."""

from __future__ import annotations

import json
import random

import pytest
from conftest import needs_shared, shared_traces
from fixtures.builder import DIRECT_COPY, FILL, FLASH_FWD, REDUCE_SUM, XMMA_GEMM

import tracelens
from tracelens.cli import main
from tracelens.errors import MissingDataError, UsageError
from tracelens.steps import FRAME_COLUMNS, flag_steps, settings
from tracelens.stepwork import parse_step_spec, select_steps
from tracelens.synth import TraceBuilder

PID = 777
KERNELS = [XMMA_GEMM, FILL, FLASH_FWD, REDUCE_SUM, DIRECT_COPY]


class Program:
    """A trace builder that launches kernels back to back on one stream, from one thread."""

    def __init__(self):
        self.b = TraceBuilder("3.0.0")
        self.b.process(PID, "python train.py")
        self.b.gpu(0, "NVIDIA H100 80GB HBM3")
        self.b.gpu(1, "NVIDIA H100 80GB HBM3")
        self.t = 1_000_000
        self.gpu_free = {0: 0, 1: 0}

    def launch(self, name, dur, *, device=0, stream=7):
        cid = self.b.runtime("cudaLaunchKernel_v7000", start=self.t, end=self.t + 5, pid=PID)
        start = max(self.t + 1_000, self.gpu_free[device] + 500)
        self.b.kernel(
            name, start=start, end=start + dur, device=device, stream=stream, correlation_id=cid
        )
        self.gpu_free[device] = start + dur
        self.t += 10

    def idle(self, ns):
        self.t = max(self.t, max(self.gpu_free.values())) + ns

    def range(self, label, body):
        s = self.t
        body()
        self.b.nvtx_range(label, start=s, end=self.t, pid=PID)
        self.t += 10

    def write(self, path):
        self.b.write(path)
        return path


def _step(p, scale=1, motif=(0, 1, 2, 0, 3), device=0):
    for k in motif:
        p.launch(KERNELS[k], 20_000 * scale, device=device)
    p.idle(50_000)


def test_profiler_step_markers_warmup_and_outlier(tmp_path):
    p = Program()
    for i in range(1, 9):
        scale = 10 if i == 1 else 3 if i == 6 else 1
        p.range(f"ProfilerStep#{i}", lambda scale=scale: _step(p, scale))
    with tracelens.open(p.write(tmp_path / "prof.sqlite")) as trace:
        s = trace.steps()
    assert s.method == "marker" and "ProfilerStep#*" in s.detail
    assert list(s.frame.columns) == list(FRAME_COLUMNS)
    assert s.count == 8 and s.frame["kernels"].to_list() == [5] * 8
    summary = s.summary()
    assert summary["warmup_steps"] == [1] and summary["outlier_steps"] == [6]
    assert "warm-up: step 1" in s.detail
    # CPU ranges are the NVTX ranges; the GPU projection starts after the launch.
    row = s.frame.row(1, named=True)
    assert row["cpu_start_ns"] < row["start_ns"] < row["end_ns"]
    assert row["busy_ns"] == row["kernel_ns"] == 5 * 20_000
    assert s.steady["step"].to_list() == list(range(2, 9))
    assert s.median_ns == row["duration_ns"]


def test_repeated_top_level_range_family(tmp_path):
    p = Program()
    p.range("setup", lambda: [p.launch(FILL, 5_000) for _ in range(3)])
    for i in range(1, 6):
        p.range(f"decode_step_{i}", lambda: p.range("layer", lambda: _step(p)))
    with tracelens.open(p.write(tmp_path / "decode.sqlite")) as trace:
        s = trace.steps()
        layer = trace.steps(range="lay*")
    assert s.method == "marker" and "decode_step_1" in s.detail
    assert s.count == 5 and s.frame["kernels"].sum() == 25
    assert layer.method == "range" and layer.count == 5


def test_period_of_the_launch_sequence(tmp_path):
    p = Program()
    for k in (4, 3, 4, 1):  # warm-up: other kernels first
        p.launch(KERNELS[k], 7_000)
    p.idle(10_000)
    for _ in range(10):
        _step(p, motif=(0, 1, 2, 0, 3, 0, 1, 2, 0, 4))  # a layer (0,1,2) repeated inside
    with tracelens.open(p.write(tmp_path / "period.sqlite")) as trace:
        s = trace.steps()
    assert s.method == "period", s.detail
    assert s.count == 10
    assert s.motif[0] == tuple(KERNELS[k] for k in (0, 1, 2, 0, 3, 0, 1, 2, 0, 4))
    assert s.frame["cpu_start_ns"].null_count() == 10
    assert "4 kernels outside complete periods" in s.detail


def test_period_per_device(tmp_path):
    p = Program()
    for _ in range(6):
        _step(p, device=0)
        _step(p, motif=(2, 3), device=1)
    with tracelens.open(p.write(tmp_path / "two.sqlite")) as trace:
        s = trace.steps()
    assert s.method == "period"
    assert {d: len(m) for d, m in s.motif.items()} == {0: 5, 1: 2}
    assert s.frame.filter(device=1).height == 6


def test_abstains_without_structure(tmp_path):
    p = Program()
    rng = random.Random(7)
    for _ in range(300):
        p.launch(rng.choice(KERNELS), rng.randrange(1_000, 9_000))
    with tracelens.open(p.write(tmp_path / "random.sqlite")) as trace:
        s = trace.steps()
    assert s.method == "none" and s.count == 0
    assert s.detail.startswith("no step structure found")
    assert s.median_ns is None and s.figures() == {}


def test_range_errors(tmp_path):
    p = Program()
    _step(p)
    path = p.write(tmp_path / "plain.sqlite")
    with tracelens.open(path) as trace, pytest.raises(UsageError, match="no NVTX data"):
        trace.steps(range="step*")
    p = Program()
    p.range("train_step", lambda: _step(p))
    p.range("eval", lambda: p.idle(5))
    with tracelens.open(p.write(tmp_path / "nvtx.sqlite")) as trace:
        with pytest.raises(UsageError, match="closest: 'train_step'"):
            trace.steps(range="train_stp")
        with pytest.raises(UsageError, match="launched no GPU work"):
            trace.steps(range="eval")


def test_flags_and_specs():
    robust = settings()["robust"]
    assert flag_steps([100, 100, 100, 100], robust) == ([False] * 4, [False] * 4)  # too few
    warm, odd = flag_steps([900, 500, 100, 101, 99, 100, 100, 250, 100, 100], robust)
    assert warm == [True, True] + [False] * 8
    assert odd == [False] * 7 + [True, False, False]
    assert parse_step_spec("3") == (3, 3) and parse_step_spec("2:5") == (2, 5)
    for bad in ("0", "5:2", "x", "1:"):
        with pytest.raises(UsageError):
            parse_step_spec(bad)


def test_select_steps(tmp_path):
    p = Program()
    for i in range(1, 7):
        p.range(f"ProfilerStep#{i}", lambda: _step(p))
    with tracelens.open(p.write(tmp_path / "sel.sqlite")) as trace:
        frame = trace.steps().frame
        where = select_steps(trace, "2:3").where
        assert (where.start_ns, where.end_ns) == (frame["start_ns"][1], frame["end_ns"][2])
        assert where.selection is not None
        assert trace.census(where=where)["instances"].sum() == 10
        with pytest.raises(UsageError, match="steps 1 to 6"):
            select_steps(trace, "7")


def test_cli(tmp_path, capsys):
    p = Program()
    for i in range(1, 6):
        p.range(f"ProfilerStep#{i}", lambda: _step(p))
    path = p.write(tmp_path / "cli.sqlite")
    with pytest.raises(SystemExit) as exit_info:
        main(["steps", str(path), "-f", "json", "--timeunit", "us"])
    assert exit_info.value.code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["method"] == "marker" and doc["summary"]["count"] == 5
    assert doc["steps"][0]["duration_us"] > 0 and "median_us" in doc["summary"]
    with pytest.raises(SystemExit):
        main(["steps", str(path)])
    out = capsys.readouterr().out
    assert "5 steps from 5 NVTX ranges 'ProfilerStep#*'" in out and "steady state" in out


@needs_shared
@pytest.mark.parametrize("path", shared_traces(), ids=lambda p: p.stem)
def test_every_shared_trace(trace_copies, path):
    copy = trace_copies[path.stem]
    with tracelens.open(copy) as trace:
        if "CUPTI_ACTIVITY_KIND_KERNEL" not in trace.tables:
            with pytest.raises(MissingDataError):
                trace.steps()
            return
        s = trace.steps()
        kernels = trace.info.count("kernel")
    assert s.method in ("marker", "period", "none") and s.detail
    assert list(s.frame.columns) == list(FRAME_COLUMNS)
    assert s.frame["kernels"].sum() <= kernels
    assert (s.frame["busy_ns"] <= s.frame["duration_ns"]).all()
    if s.count:
        assert s.median_ns > 0


def test_the_summary_floats_do_not_depend_on_the_frames_row_order():
    """mean and std are float sums over the steps: they add in step order, so a frame read
    back in another row order (or without polars' sorted flag) gives them to the last digit."""
    import random

    import polars as pl

    from tracelens.steps import Steps

    rows = random.Random(7).sample(range(10**14, 10**15), 400)
    frame = pl.DataFrame(
        {
            "step": list(range(1, 401)),
            "duration_ns": rows,
            "warmup": [False] * 400,
            "outlier": [False] * 400,
        }
    )
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=3)
    ordered = Steps("period", "", frame)
    other = Steps("period", "", shuffled)
    assert (other.mean_ns, other.std_ns, other.p90_ns) == (
        ordered.mean_ns,
        ordered.std_ns,
        ordered.p90_ns,
    )
