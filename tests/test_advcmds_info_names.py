"""info keeps one ``key value`` line per fact: a process name holding a line break shows it
as ``\\x0a`` (a raw break started a line with no key), and a GPU name nsys wrote with a
trailing space ('NVIDIA GeForce RTX 3060 Laptop ' in a 2021.3 export) reads without the
doubled space before its details (found by advcmds)."""

from __future__ import annotations

import pytest
from conftest import run_cli


@pytest.fixture
def export(tmp_path):
    synth = pytest.importorskip("tracelens.synth")
    b = synth.TraceBuilder("3.23.3")
    b.process(4242, "python\nx.py")
    b.gpu(0, "NVIDIA GeForce RTX 3060 Laptop ", cuda_device=0, sm_count=30,
          total_memory=6_235_422_720, compute_capability=(8, 6), bus_location="0000:01:00.0")  # fmt: skip
    cid = b.runtime("cudaLaunchKernel_v7000", start=1_000, end=2_000, pid=4242)
    b.kernel("k", start=3_000, end=4_000, correlation_id=cid, pid=4242)
    return b.write(tmp_path / "t.sqlite")


def test_table_lines(export, capsys):
    rc, out, err = run_cli(["info", export], capsys)
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert lines[4:6] == [
        "gpu 0      NVIDIA GeForce RTX 3060 Laptop (--device 0, 0000:01:00.0, 30 SMs, 5.8 GiB, "
        "sm_86)",
        "process    4242 python\\x0ax.py",
    ]
    assert len(lines) == 11  # file, nsys, schema, span, gpu, process and 5 kinds


def test_markdown_rows(export, capsys):
    rc, out, err = run_cli(["info", export, "-f", "md"], capsys)
    assert (rc, err) == (0, "")
    assert "| process | 4242 python\\\\x0ax.py |\n" in out
    assert "| gpu 0 | NVIDIA GeForce RTX 3060 Laptop (--device 0, " in out
