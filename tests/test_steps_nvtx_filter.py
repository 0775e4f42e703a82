"""`tracelens steps --nvtx GLOB` (#12: --nvtx on steps): the same steps, numbered as without
it, each counting only the GPU work launched inside the matching NVTX ranges, and a note
saying how many ranges matched."""

from __future__ import annotations

from conftest import run_cli

from tracelens.synth import TraceBuilder

ATTN = "void attn_kernel(int)"
MLP = "void mlp_kernel(int)"


def nested_steps(path):
    """Four 'step' ranges; in step N an 'attn' range launches ATTN (N µs), then MLP (10 µs)
    is launched outside it."""
    b = TraceBuilder("3.23.3")
    b.process(10, "python train.py")
    b.gpu(0)
    for n in range(1, 5):
        t0 = n * 100_000
        b.nvtx_range("step", start=t0, end=t0 + 50_000, pid=10, tid=10)
        b.nvtx_range("attn", start=t0 + 500, end=t0 + 1_800, pid=10, tid=10)
        cid = b.runtime("cudaLaunchKernel", start=t0 + 1_000, end=t0 + 1_500, pid=10, tid=10)
        b.kernel(ATTN, start=t0 + 10_000, end=t0 + 10_000 + n * 1_000, pid=10, correlation_id=cid)
        cid = b.runtime("cudaLaunchKernel", start=t0 + 2_000, end=t0 + 2_500, pid=10, tid=10)
        b.kernel(MLP, start=t0 + 20_000, end=t0 + 30_000, pid=10, correlation_id=cid)
    return b.write(path)


def test_steps_nvtx_counts_each_steps_work_inside_the_ranges(tmp_path, capsys):
    path = nested_steps(tmp_path / "t.sqlite")
    code, whole, err = run_cli(["steps", path, "-f", "csv"], capsys)
    assert (code, err) == (0, "")
    code, out, err = run_cli(["steps", path, "--nvtx", "attn", "-f", "csv"], capsys)
    assert code == 0
    assert (
        err
        == "tracelens: note: only the GPU work launched inside the 4 NVTX ranges matching 'attn'\n"
    )
    rows = [line.split(",") for line in out.splitlines()]
    head = rows[0]
    got = [
        (r[head.index("step")], r[head.index("kernels")], r[head.index("kernel_ns")])
        for r in rows[1:]
    ]
    # steps 1-4 as without --nvtx, each holding its one attention launch (N µs)
    assert got == [("1", "1", "1000"), ("2", "1", "2000"), ("3", "1", "3000"), ("4", "1", "4000")]
    all_rows = [line.split(",") for line in whole.splitlines()]
    assert [(r[head.index("step")], r[head.index("kernels")]) for r in all_rows[1:]] == [
        (str(n), "2") for n in range(1, 5)
    ]


def test_steps_takes_no_step_filter(tmp_path, capsys):
    path = nested_steps(tmp_path / "t.sqlite")
    code, out, err = run_cli(["steps", path, "--step", "2"], capsys)
    assert (code, out) == (2, "")
    assert "No such option: --step" in err


def test_the_selections_span_is_not_called_a_window(tmp_path, capsys):
    # --nvtx narrows the filter's window to the selected work's span (110 µs to 414 µs
    # here): the title said 'restricted to the selected GPU work and the window 110.0
    # µs–414.0 µs ... (step 4 only in part)', a window nobody asked for, cutting through
    # no step's selected work. A window that is asked is still said.
    path = nested_steps(tmp_path / "t.sqlite")
    code, out, err = run_cli(["steps", path, "--nvtx", "attn", "--kernels", "0"], capsys)
    assert code == 0
    assert out.splitlines()[0] + " " + out.splitlines()[1] == (
        "steps of t.sqlite: 4 steps from 4 top-level NVTX ranges like 'step' that launched "
        "100% of the GPU time; restricted to the selected GPU work: each step's GPU work there"
    )
    code, out, err = run_cli(["steps", path, "--nvtx", "attn", "--start", "150us",
                              "--kernels", "0", "-f", "json"], capsys)  # fmt: skip
    assert code == 0
    assert out.count("restricted to the selected GPU work and the window from 150.0 µs: each "
                     "step's GPU work there (step 1 holds none, left out)") == 1  # fmt: skip


def test_no_step_holding_the_selection_is_counted_zero(tmp_path, capsys):
    # the steps exist, and none holds attention work from 450 µs on (step 4's ends at
    # 414 µs): a gate on their count is measured (0), a step time is not (found by
    # advfilters: both said 'steps was not measured: no steps found')
    path = nested_steps(tmp_path / "t.sqlite")
    args = ["steps", path, "--nvtx", "attn", "--start", "450us", "--kernels", "0"]
    code, out, err = run_cli([*args, "--fail-if", "steps<1"], capsys)
    assert code == 1
    assert err.endswith("tracelens: gate tripped: steps<1 (steps = 0)\n")
    code, out, err = run_cli([*args, "--fail-if", "step_median_ms>1"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        "tracelens: --fail-if: step_median_ms was not measured: no step holds the selected "
        "GPU work\n"
    )
