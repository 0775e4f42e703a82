"""stakeout shows a kernel or NVTX name holding a line break as ``\\x0a`` in the table's title
and launches caption, as every other text output shows it (the launch rows, the closest-name
hint); a raw break split the title over two lines (found by advcmds)."""

from __future__ import annotations

import pytest
from conftest import run_cli


def _export(tmp_path, kernels):
    synth = pytest.importorskip("tracelens.synth")
    b = synth.TraceBuilder("3.25.0")
    b.process(4242, "python x.py")
    b.nvtx_range("step\n1", start=500_000, end=2_000_000, pid=4242)
    t = 1_000_000
    for name in kernels:
        cid = b.runtime("cudaLaunchKernel_v7000", start=t - 2_000, end=t - 1_000, pid=4242)
        b.kernel(name, start=t, end=t + 1_000, correlation_id=cid, pid=4242)
        t += 100_000
    return b.write(tmp_path / "names.sqlite")


def test_title_shows_a_line_break_escaped(tmp_path, capsys):
    path = _export(tmp_path, ["line1\nline2", "line1\nline2"])
    rc, out, err = run_cli(["stakeout", path, "line1"], capsys)
    assert (rc, err) == (0, "")
    assert out.splitlines()[0] == (
        "stakeout of names.sqlite: 'line1' (contains), 2 launches of line1\\x0aline2"
    )


def test_folded_values_show_a_line_break_escaped(tmp_path, capsys):
    # two kernels, the launches listed (--limit 2) of one: its name and NVTX range are said
    # once, above them
    path = _export(tmp_path, ["gemm\na", "gemm\na", "gemm\nb"])
    rc, out, err = run_cli(["stakeout", path, "gemm", "--limit", "2"], capsys)
    assert (rc, err) == (0, "")
    caption = next(line for line in out.splitlines() if line.startswith("launches, "))
    assert caption == (
        "launches, by start (first 2 of 3; --limit 0 for all); in each of these 2: "
        "Name gemm\\x0aa, config 1, device 0, stream 7, PID 4242, TID 4242, "
        "API cudaLaunchKernel, NVTX step\\x0a1"
    )
