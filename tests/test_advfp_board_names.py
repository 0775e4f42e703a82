"""The path board of ``fingerprint --check`` (and of ``diff`` with a fingerprint) shows
file names and NVTX region labels with their control characters as ``\\xNN``, as the
other boards do (``diff`` of two traces: "A = run\\x0a2.sqlite"): a line break in either
split the board's lines (found by advfp)."""

from __future__ import annotations

from conftest import run_cli

from tracelens.synth import TraceBuilder

GEMM = "nvjet_tst_128x96_64x7_4x1_v_bz_bias_TNT"
GEMM_SPLITK = "nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT"


def _run(path, gemm: str):
    """Two steps, each a range "attn\\nblock" (in its step_N range) around one GEMM launch."""
    b = TraceBuilder("3.23.3")
    b.process(4242, "python train.py")
    b.gpu(0)
    t = 1_000_000
    for step in (1, 2):
        b.nvtx_range(f"step_{step}", start=t, end=t + 50_000)
        b.nvtx_range("attn\nblock", start=t + 1_000, end=t + 20_000, registered=True)
        cid = b.runtime("cudaLaunchKernel_v7000", start=t + 2_000, end=t + 5_000)
        b.kernel(gemm if step == 2 else GEMM, start=t + 6_000, end=t + 16_000, correlation_id=cid)
        t += 100_000
    return b.write(path)


def test_names_with_line_breaks_stay_on_their_line(tmp_path, capsys):
    base = _run(tmp_path / "base.sqlite", GEMM)
    baseline = tmp_path / "base\nline.json"
    code, out, _ = run_cli(["fingerprint", base, "-o", baseline], capsys)
    assert code == 0
    run = _run(tmp_path / "run\n2.sqlite", GEMM_SPLITK)
    code, out, err = run_cli(["fingerprint", run, "--check", baseline], capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == (
        "numerical path: run\\x0a2.sqlite differs from base\\x0aline.json in 1 of 2 regions"
    )
    assert lines[1].startswith(
        "first divergence: step_2 > attn\\x0ablock, device 0, launch #2 of the capture "
        "(#1 of region step_2 > attn\\x0ablock): nvjet_tst_64x8"
    )
    assert lines[4:6] == ["changed regions:", "  device 0, step_2 > attn\\x0ablock"]
    assert len(lines) == 7
    code, md, _ = run_cli(["fingerprint", run, "--check", baseline, "-f", "markdown"], capsys)
    assert md.splitlines()[1:] == [*lines, "```"]
