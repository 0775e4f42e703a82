"""A step family whose label holds a regex metacharacter: steps, diff and report stopped with
'internal error: ... missing ]' on NVTX ranges labelled with a terminal colour escape
('\\x1b[1mstep 1\\x1b[0m': its family '...[#m...' is no regex): the family search
matches labels by their family, not by a regex, but the SQL compiled the family as a regex
all the same. Found by advreport."""

from __future__ import annotations

from test_report import SectionRows

import tracelens
from tracelens.report import build_report
from tracelens.steps import find_steps
from tracelens.synth import TraceBuilder

LABEL = "\x1b[1mstep {i}\x1b[0m"


def bracket_steps(path, label=LABEL):
    """Six NVTX ranges ``label`` of 1 .. 6, each launching two kernels."""
    b = TraceBuilder("3.23.3")
    b.process(11, "./train")
    b.gpu(0)
    t = 1_000_000
    for i in range(1, 7):
        b.nvtx_range(label.format(i=i), start=t, end=t + 40_000, pid=11)
        for k in ("gemm", "softmax"):
            cid = b.runtime("cudaLaunchKernel", start=t + 1_000, end=t + 2_000, pid=11)
            b.kernel(k, start=t + 5_000, end=t + 15_000, correlation_id=cid, pid=11)
            t += 16_000
        t += 30_000
    return b.write(path)


def test_steps_of_a_label_with_a_bracket(tmp_path):
    path = bracket_steps(tmp_path / "b.sqlite")
    with tracelens.open(path) as t:
        s = find_steps(t)
    assert s.method == "marker"  # steps from NVTX ranges
    assert s.frame["step"].to_list() == [1, 2, 3, 4, 5, 6]


def test_report_of_a_label_with_a_bracket(tmp_path):
    path = bracket_steps(tmp_path / "b.sqlite")
    with tracelens.open(path) as t:
        html = build_report(t)
    # the steps table lists the six steps
    rows = [r for r in SectionRows(html, "steps").rows if r]
    assert [r[0] for r in rows if r[0].isdigit()][-6:] == ["1", "2", "3", "4", "5", "6"], rows
