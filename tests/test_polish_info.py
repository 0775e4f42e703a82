"""tracelens info -f markdown (and md, as every other command): the lines of the table
format as a two-column Markdown table, the program's text escaped."""

from __future__ import annotations

import pytest
from conftest import run_cli

from tracelens.demo import demo_path

synth = pytest.importorskip("tracelens.synth")


@pytest.mark.parametrize("fmt", ["markdown", "md"])
def test_info_markdown_is_the_table_lines_as_a_table(fmt, capsys):
    rc, out, err = run_cli(["info", "--demo", "bs16", "-f", fmt], capsys)
    assert (rc, err) == (0, "")
    assert out == (
        "**info of bs16.sqlite**\n"
        "\n"
        "| Field | Value |\n"
        "| :--- | :--- |\n"
        f"| file | {demo_path('bs16')} (0.4 MB) |\n"
        "| nsys | 2025.5.1.121 |\n"
        "| schema | 3.23.3 \\[META_DATA_EXPORT\\] |\n"
        "| span | 2.00 s → 2.16 s (duration 156.5 ms, from session start) |\n"
        "| gpu 0 | NVIDIA H100 80GB HBM3 (--device 0, 0000:18:00.0, 132 SMs, 79.6 GiB, sm_90) |\n"
        "| process | 48213 python -m vllm.entrypoints.openai.api_server --model "
        "Qwen/Qwen2.5-7B-Instruct |\n"
        "| kernel | 1,949 |\n"
        "| memcpy | 88 |\n"
        "| memset | 429 |\n"
        "| runtime | 2,471 |\n"
        "| nvtx | 145 |\n"
    )


def test_info_markdown_has_a_row_per_table_line(capsys):
    _, table, _ = run_cli(["info", "--demo", "bs1"], capsys)
    _, md, _ = run_cli(["info", "--demo", "bs1", "-f", "md"], capsys)
    rows = md.splitlines()[4:]
    assert len(rows) == len(table.splitlines())
    for line, row in zip(table.splitlines(), rows, strict=True):
        key, value = row.removeprefix("| ").removesuffix(" |").split(" | ")
        assert line.split()[0] == key.split()[0]
        assert line.endswith(value.replace("\\[", "[").replace("\\]", "]"))


def test_info_markdown_escapes_the_programs_text(tmp_path, capsys):
    b = synth.TraceBuilder("3.23.3")
    b.process(7, "evil | <img src=x> \x1b[2J`x`")
    b.gpu(0, "NVIDIA H100 80GB HBM3", cuda_device=0)
    c = b.runtime("cudaLaunchKernel_v7000", start=1_000, end=2_000, pid=7)
    b.kernel("k", start=3_000, end=4_000, correlation_id=c, pid=7)
    rc, out, _ = run_cli(["info", b.write(tmp_path / "t.sqlite"), "-f", "md"], capsys)
    assert rc == 0
    assert "| process | 7 evil \\| &lt;img src=x&gt; \\\\x1b\\[2J\\`x\\` |\n" in out
