"""Control characters in names from the profiled program (a kernel named with a terminal
colour escape, a bell, DEL, a C1 control) reached the page raw: each is a parse error in
HTML ('control-character-in-input-stream'), and a browser shows nothing or a box where the
text outputs show ``\\xNN``. The page shows them as the CLI does. Found by advreport."""

from __future__ import annotations

import re

from test_report import Page, SectionRows, check_self_contained

import tracelens
from tracelens.report import build_report
from tracelens.synth import TraceBuilder

KERNEL = "bad\x01\x1b[31mkernel\x7f"
SHOWN = "bad\\x01\\x1b[31mkernel\\x7f"  # as `tracelens census` prints it
PROCESS = "./app\x07\x9b"
# What HTML calls control characters, less the whitespace it allows
RAW_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


def hostile(path, stem):
    b = TraceBuilder("3.23.3")
    b.process(11, PROCESS)
    b.gpu(0)
    t = 1_000_000
    for _ in range(4):
        b.nvtx_range("step\x1b]8;;x\x07", start=t, end=t + 30_000, pid=11)
        for name in (KERNEL, "gemm"):
            cid = b.runtime("cudaLaunchKernel", start=t + 100, end=t + 900, pid=11)
            b.kernel(name, start=t + 1_000, end=t + 9_000, correlation_id=cid, pid=11)
            t += 10_000
        t += 20_000
    return b.write(path / f"{stem}.sqlite")


def test_single_page_shows_control_characters_as_text(tmp_path):
    with tracelens.open(hostile(tmp_path, "a")) as t:
        html = build_report(t)
    assert RAW_CONTROLS.findall(html) == []
    check_self_contained(html, Page(html))
    census = [r for r in SectionRows(html, "census").rows if r]
    assert any(r[0].startswith(SHOWN) for r in census), census
    assert "./app\\x07\\x9b" in Page(html).text


def test_pair_page_shows_control_characters_as_text(tmp_path):
    a, b = hostile(tmp_path, "a"), hostile(tmp_path, "b")
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        html = build_report(ta, tb)
    assert RAW_CONTROLS.findall(html) == []
    assert SHOWN in Page(html).text
