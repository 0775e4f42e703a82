"""`tracelens report` of a trace whose CUDA work is copies and memsets only (a copy-bound data
loading profile): the page shows what the trace has (line-up, utilization, timeline, memory)
and each kernel section says the trace has no kernels; a pair with such a side gets a page
saying there is no diff (it compares kernels) and each trace's sections; a trace without any
CUDA work, alone or in a pair, exits 3 as census does."""

from __future__ import annotations

import re

from conftest import run_cli
from test_report import Page, SectionRows, check_self_contained

from tracelens.synth import TraceBuilder

REASON = "No CUDA kernels in this trace: CUDA was traced and only 3 memory copies and 1 memset ran"
WHY_EXIT = "CUDA was traced and no kernel ran (it holds 3 memory copies and 1 memset: see `tracelens memory`)"


def copies_only(path, nvtx: bool = False):
    """Three 4 MB host-to-device copies of 400 µs, 1 ms apart, and a 10 µs memset, on GPU 0;
    ``nvtx``: each copy launched inside an NVTX range 'load' of 500 µs."""
    b = TraceBuilder("3.0.0")
    b.process(7, "python load.py")
    b.gpu(0)
    for i in range(3):
        t = i * 1_000_000
        if nvtx:
            b.nvtx_range("load", start=t, end=t + 500_000, pid=7)
        cid = b.runtime("cudaMemcpyAsync_v3020", start=t, end=t + 10_000, pid=7)
        b.memcpy("HtoD", 4_000_000, start=t + 20_000, end=t + 420_000, pid=7, correlation_id=cid)
    cid = b.runtime("cudaMemsetAsync_v3020", start=3_000_000, end=3_005_000, pid=7)
    b.memset(1 << 20, start=3_010_000, end=3_020_000, pid=7, correlation_id=cid)
    return b.write(path)


def section_text(html: str, section: str) -> str:
    """The text of ``<section id=section>`` (the kernel sections nest none), spaces collapsed."""
    match = re.search(rf'<section id="{section}">(.*?)</section>', html, re.S)
    assert match, section
    return " ".join(Page(match.group(1)).text.split())


def test_page_of_copies_only_shows_what_the_trace_has(tmp_path, capsys):
    path = copies_only(tmp_path / "load.sqlite")
    rc, out, err = run_cli(["report", path, "-o", tmp_path / "r.html", "--no-cache"], capsys)
    assert (rc, out, err) == (0, "", "")
    html = (tmp_path / "r.html").read_text()
    page = Page(html)
    check_self_contained(html, page)
    for section in ("census", "lineup", "stakeout", "steps", "timeline", "danger", "memory"):
        assert section in page.ids, section
        assert f'href="#{section}"' in html, section
    # each kernel section says so, with no table and no zero
    assert section_text(html, "census") == f"Census GPU time by kernel {REASON}."
    assert section_text(html, "stakeout").endswith(
        "No kernel durations or launch configurations to show: this trace has no CUDA kernels."
    )
    assert section_text(html, "danger").endswith(
        "No kernel to check against the danger-zone rules: this trace has no CUDA kernels."
    )
    for section in ("census", "stakeout", "danger"):
        assert not SectionRows(html, section).rows, section
    assert "captured without -t cuda" not in page.text
    # what the trace has: its copies in the line-up, util and memory, as those commands say
    lineup = SectionRows(html, "lineup").rows
    assert [r[:5] for r in lineup if r] == [
        ["memory", "", "100.0%", "1.21 ms", "4"],
        ["", "[CUDA memcpy HtoD]", "99.2%", "1.20 ms", "3"],
        ["", "[CUDA memset]", "0.8%", "10.00 µs", "1"],
    ]
    steps = SectionRows(html, "steps")
    # span 0 (the first CUDA call) -> 3.02 ms, busy 1.21 ms: all of it exposed memory
    assert [r[2:] for r in steps.rows if r] == [
        ["3.02 ms", "1.21 ms", "40.1%", "0 ns", "0 ns", "1.21 ms", "1.81 ms"]
    ]
    assert "No steps: the step search reads kernel launches, and this trace has none." in (
        section_text(html, "steps")
    )
    assert [r[:3] for r in SectionRows(html, "memory").rows if r] == [
        ["[CUDA memcpy HtoD]", "3", "1.20 ms"],
        ["[CUDA memset]", "1", "10.00 µs"],
    ]
    assert "GPU 0 · stream" in section_text(html, "timeline")


def test_markdown_of_copies_only(tmp_path, capsys):
    path = copies_only(tmp_path / "load.sqlite")
    rc, out, err = run_cli(["report", path, "-f", "markdown", "--no-cache"], capsys)
    assert (rc, err) == (0, "")
    assert out.split("\n")[4:] == [
        f"_{REASON}._",
        "",
        "### Memory operations",
        "",
        "| Operation | Count | Time | Share | Avg | Bytes |",
        "| :--- | ---: | ---: | ---: | ---: | ---: |",
        "| `[CUDA memcpy HtoD]` | 3 | 1.20 ms | 99.2% | 400.0 µs | 12.0 MB |",
        "| `[CUDA memset]` | 1 | 10.00 µs | 0.8% | 10.00 µs | 1.0 MB |",
        "",
    ]


def test_page_of_copies_only_is_kept_in_the_cache(tmp_path, capsys, cache_dir):
    path = copies_only(tmp_path / "load.sqlite")
    first = run_cli(["report", path, "-o", tmp_path / "1.html"], capsys)
    kept = list(cache_dir.glob("traces/*/tracelens_report-*"))
    second = run_cli(["report", path, "-o", tmp_path / "2.html"], capsys)
    direct = run_cli(["report", path, "-o", tmp_path / "3.html", "--no-cache"], capsys)
    assert first[0] == second[0] == direct[0] == 0
    assert len(kept) == 1
    pages = [(tmp_path / f"{n}.html").read_text() for n in (1, 2, 3)]
    assert pages[0] == pages[1] == pages[2]
    assert REASON in pages[1]


def test_no_cuda_work_keeps_exit_3(trace_copies, capsys, tmp_path):
    for stem in ("nsys2021.3_cpu_only_no_cuda", "nsys2022.4_trt_nvtx_only"):
        path = trace_copies[stem]
        for fmt in ("html", "markdown"):
            args = ["report", path, "-f", fmt, "-o", tmp_path / "r", "--no-cache"]
            assert run_cli(args, capsys) == (
                3,
                "",
                f"tracelens: {path}: no CUDA kernel data: was it captured with -t cuda?\n",
            )
            assert not (tmp_path / "r").exists()


def test_pair_with_a_copies_only_side_gets_a_page_without_a_diff(tmp_path, capsys):
    """The diff compares kernels: with a side that has only copies and memsets it exits 3
    (its message unchanged), and the report of the pair is a page that says so and shows
    each trace's own sections (it exited 3 too)."""
    from tracelens.demo import demo_path

    path = copies_only(tmp_path / "load.sqlite")
    bs1 = demo_path("bs1")
    why = (3, "", f"tracelens: {path}: no CUDA kernel data: {WHY_EXIT}\n")
    for key, pair in (("B", [bs1, path]), ("A", [path, bs1])):
        assert run_cli(["diff", *pair, "--no-cache"], capsys) == why
        out = tmp_path / f"{key}.html"
        assert run_cli(["report", *pair, "-o", out, "--no-cache"], capsys) == (0, "", "")
        html = out.read_text()
        page = Page(html)
        check_self_contained(html, page)
        said = f"{key} (load.sqlite) has no CUDA kernels: CUDA was traced and only 3 memory copies and 1 memset ran."
        board = section_text(html, "board")
        assert board.startswith(
            f"No diff the diff compares kernels {said} The diff compares kernels"
        )
        assert "evidence board" in board
        copies, kernels = key.lower(), "a" if key == "B" else "b"
        assert section_text(html, f"{copies}-census") == f"Census GPU time by kernel {REASON}."
        assert SectionRows(html, f"{kernels}-census").rows  # the demo trace's kernels
        for side in (copies, kernels):
            for section in ("lineup", "steps", "timeline", "danger", "memory"):
                assert f"{side}-{section}" in page.ids, (side, section)
        assert [r[:3] for r in SectionRows(html, f"{copies}-memory").rows if r] == [
            ["[CUDA memcpy HtoD]", "3", "1.20 ms"],
            ["[CUDA memset]", "1", "10.00 µs"],
        ]
        assert html.count('<div class="legend">') == 1
        rc, md, err = run_cli(["report", *pair, "-f", "markdown", "--no-cache"], capsys)
        assert (rc, err) == (0, "")
        assert f"_{said[:-1]}._" in md.split("\n")
        assert "## tracelens report: `load.sqlite`" in md
        assert "## tracelens report: `bs1.sqlite`" in md
        assert f"_{REASON}._" in md


def test_pair_with_a_side_without_cuda_work_keeps_exit_3(tmp_path, capsys, trace_copies):
    """A side with no CUDA work at all (the CPU-only shared trace) beside a copies-only one:
    exit 3 with the census's message for it, as the page of that trace alone."""
    path = copies_only(tmp_path / "load.sqlite")
    cpu = trace_copies["nsys2021.3_cpu_only_no_cuda"]
    why = (3, "", f"tracelens: {cpu}: no CUDA kernel data: was it captured with -t cuda?\n")
    for pair in ([path, cpu], [cpu, path]):
        for fmt in ("html", "markdown"):
            args = ["report", *pair, "-f", fmt, "-o", tmp_path / "r", "--no-cache"]
            assert run_cli(args, capsys) == why
            assert not (tmp_path / "r").exists()
