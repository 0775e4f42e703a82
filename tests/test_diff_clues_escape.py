"""The diff's terminal table shows control characters of names from the trace as \\xNN,
as census, lineup, timeline, Markdown and HTML do: an SGR sequence in a kernel name must
not colour (or a longer ESC sequence retitle, clear or link) the reader's terminal."""

from __future__ import annotations

from conftest import run_cli

from tracelens.synth import TraceBuilder

NAMES = ["\x1b[31mred_kernel\x1b[0m", "void k_nl<\nline2>(int)", "\x1b]0;owned\x07title_kernel"]


def build(tmp_path, stem, scale):
    b = TraceBuilder("3.25.0")
    b.process(4242, "python train.py")
    b.gpu(0)
    t, cpu = 1_000_000, 900_000
    for _ in range(10):
        for i, name in enumerate(NAMES):
            cid = b.runtime("cudaLaunchKernel_v7000", start=cpu, end=cpu + 3_000)
            dur = int(50_000 * (scale if i == 0 else 1))
            b.kernel(name, start=t, end=t + dur, correlation_id=cid)
            cpu, t = cpu + 4_000, t + dur + 5_000
    path = tmp_path / f"{stem}.sqlite"
    b.write(path)
    return path


def test_diff_table_escapes_control_characters_in_names(tmp_path, capsys):
    a, b = build(tmp_path, "a", 1.0), build(tmp_path, "b", 3.0)
    rc, out, _err = run_cli(["diff", a, b, "--no-cache"], capsys)
    assert rc == 0
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b[31mred_kernel\\x1b[0m" in out  # the kernels table and the board
    assert "\\x1b]0;owned\\x07title_kernel" in out
    assert "k_nl<" in out and "\nline2" not in out  # a name stays on its line
