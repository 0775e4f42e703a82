"""Every Markdown output is safe to paste into a GitHub PR comment or $GITHUB_STEP_SUMMARY.

Kernel names, NVTX text, process and file names come from the profiled program (or whoever
made the trace) and are untrusted. Outside code spans ``&``, ``<`` and ``>`` are entities;
inside a code span (literal on GitHub) a backtick in the name cannot close the span. Each
output is checked two ways: on its source (no raw ``<img``, ``<script``, ``<!--``,
``<details`` outside code spans) and through a CommonMark renderer with raw HTML enabled,
as GitHub's is (no element or comment from the names survives; the names read back
exactly).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import run_cli

import tracelens
from tracelens.render import md_code, md_text
from tracelens.report import build_markdown
from tracelens.synth import TraceBuilder

GEMM = 'gemm_"><img src=x onerror=alert(2)>_kernel'
COMMENT = "<!-- everything after this is hidden"
TICK = "tick`<img src=y onerror=alert(3)>`kernel"
TICKS = "``<script>alert(4)</script>``"
MERGE = "vllm::merge_attn_states_kernel<details open>"  # a danger-zone kernel
NVTX = "<details><summary>step</summary>"
PROCESS = "<script>alert(5)</script>"
NAMES = (GEMM, COMMENT, TICK, TICKS, MERGE)
RAW = ("<img", "<script", "<!--", "<details", "<summary")
# What a CommonMark renderer may produce from these outputs; anything else came from a name.
ALLOWED_TAGS = {"h1", "h2", "h3", "p", "strong", "em", "code", "br"}
ALLOWED_TAGS |= {"table", "thead", "tbody", "tr", "th", "td"}


def hostile_trace(path: Path, *, slow: bool = False) -> Path:
    """Hostile kernel names and NVTX text; ``slow``: the GEMM takes twice as long and one
    kernel appears only here, so the diff has clues and tables that name them."""
    b = TraceBuilder("3.25.0")
    b.process(4242, PROCESS)
    b.gpu(0)
    t = 1_000_000
    names = [*NAMES, "only_in_b<img src=z>"] if slow else list(NAMES)
    for _ in range(6):
        b.nvtx_range(NVTX, start=t, end=t + 190_000)
        s = t + 10_000
        for n in names:
            dur = 40_000 if slow and n == GEMM else 20_000
            cid = b.runtime("cudaLaunchKernel", start=s - 5_000, end=s - 2_000)
            b.kernel(n, start=s, end=s + dur, correlation_id=cid)
            s += dur + 5_000
        b.memset(4096, start=s, end=s + 1_000)
        t += 200_000
    b.write(path)
    return path


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("hostile")
    # The file names are shown too (titles, headings): hostile as well.
    return (
        hostile_trace(root / "a<img src=f>.sqlite"),
        hostile_trace(root / "b`<details>.sqlite", slow=True),
    )


# -- checks -----------------------------------------------------------------------------------
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def outside_code_spans(md: str) -> str:
    """The Markdown source without its code spans (CommonMark: a run of n backticks up to
    the next run of exactly n; a backslash-escaped backtick opens nothing)."""
    return _CODE_SPAN.sub("", md.replace("\\`", ""))


class Rendered(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.comments: list[str] = []
        self.parts: list[str] = []
        self.feed(html)
        self.close()
        self.text = "".join(self.parts)

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)

    def handle_comment(self, data):
        self.comments.append(data)

    def handle_data(self, data):
        self.parts.append(data)


def render_like_github(md: str) -> str:
    from markdown_it import MarkdownIt  # rich's own dependency

    return MarkdownIt("commonmark", {"html": True}).enable("table").render(md)


def check_markdown(md: str, *names: str) -> None:
    """No raw HTML from a name anywhere, and every name in ``names`` reads back exactly."""
    rest = outside_code_spans(md)
    for raw in RAW:
        assert raw not in rest.lower(), (raw, [ln for ln in rest.splitlines() if raw in ln])
    html = render_like_github(md)
    page = Rendered(html)
    assert page.tags <= ALLOWED_TAGS, page.tags - ALLOWED_TAGS
    assert page.comments == []
    for raw in RAW:
        assert raw not in html.lower(), raw
    text = re.sub(r"\s+", " ", page.text)
    for name in names:
        assert name.strip() in text, name


# -- the helpers --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        GEMM,
        COMMENT,
        TICK,
        TICKS,
        "`",
        "``",
        "` x `",
        " padded ",
        "a | b",
        "back\\slash\\|pipe",
        "[link](https://example.com) ![img](https://example.com/x.png)",
        "&amp; &lt;",
    ],
)
def test_helpers_round_trip_through_a_commonmark_renderer(text):
    for md in (md_text(text), md_code(text)):
        assert "\n" not in md
        check_markdown(f"{md}\n", text)
        # ... and in a table cell, where an unescaped pipe would end the cell.
        for cell in (md_text(text), md_code(text, table=True)):
            table = f"| h |\n| :--- |\n| {cell} |\n"
            html = render_like_github(table)
            assert html.count("<td") == 1, table
            check_markdown(table, text)
    assert "<a" not in render_like_github(md_text(text))
    assert "<img" not in render_like_github(md_text(text))


def test_helpers_keep_plain_text_as_it_was():
    assert md_text("nvjet_tst_128x96_64x7_4x1_v_bz_bias_TNT: 5.12× longer") == (
        "nvjet_tst_128x96_64x7_4x1_v_bz_bias_TNT: 5.12× longer"
    )
    assert md_text("a<b> & c|d\ne") == "a&lt;b&gt; &amp; c\\|d e"
    assert md_code("reduce_kernel") == "`reduce_kernel`"
    assert md_code("a`b") == "``a`b``"
    assert md_code("`a") == "`` `a ``"
    assert md_code("my|kernel") == "`my|kernel`"
    assert md_code("my|kernel", table=True) == "`my\\|kernel`"
    assert md_code("line\nbreak") == "`line break`"
    assert md_code(" padded ") == "`  padded  `"
    assert md_code(" lead") == "` lead`"


# -- the commands -------------------------------------------------------------------------------
def test_table_commands(pair, capsys):
    a, b = pair
    commands = [
        (["census", b], NAMES),
        (["census", b, "--name", "demangled"], NAMES),
        (["lineup", b, "--name", "demangled"], ()),
        (["lineup", b, "--show-other"], (COMMENT, TICK, TICKS)),
        (["danger", b], (MERGE,)),
        (["decode", "--trace", b], ()),
        (["decode", *NAMES], NAMES),  # names from the command line: no file
        (["stakeout", b, "gemm_"], (GEMM, NVTX)),
        (["stakeout", b, "tick"], (TICK,)),
        (["timeline", b, "--limit", "40"], (NVTX,)),
        (["memory", b], ()),
        (["info", b], ()),
    ]
    for args, names in commands:
        rc, out, err = run_cli([*args, "-f", "markdown"], capsys)
        if args[0] == "info" and rc != 0:
            continue  # info has no markdown format
        assert rc == 0, (args, err)
        check_markdown(out, *names, *([b.name] if b in args else []))


def test_diff_markdown(pair, capsys):
    a, b = pair
    rc, out, err = run_cli(["diff", a, b, "-f", "markdown", "--top", "20"], capsys)
    assert rc == 0, err
    check_markdown(out, a.name, b.name, GEMM, TICK, "only_in_b<img src=z>")
    # In the tables the names are code spans; in the evidence board's text, entities.
    assert f"| {md_code(GEMM, table=True)} |" in out
    board = out.split("### Evidence board", 1)[1].split("\n### ", 1)[0]
    assert 'gemm_"&gt;_kernel: 2.00× longer per call' in board  # (template args cut)
    assert "### Evidence board" in out and "| Clue | Impact | Evidence | Verdict |" in out


def test_report_markdown(pair):
    a, b = pair
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        single = build_markdown(tb, top=20)
        double = build_markdown(ta, tb, top=20)
    check_markdown(single, b.name, GEMM, COMMENT, TICK, TICKS, MERGE)
    check_markdown(double, a.name, b.name, GEMM, TICK)
    assert md_code(b.name) in single.splitlines()[0]


def test_report_markdown_cli(pair, capsys):
    a, b = pair
    for args in (["report", b], ["report", a, b]):
        rc, out, err = run_cli([*args, "-f", "markdown"], capsys)
        assert rc == 0, err
        check_markdown(out, b.name)
