"""The report's filters (#12: `--nvtx GLOB` on report; with it --step, --device, --pid,
--stream, --start/--end, as every one-trace command takes them): every section of the page
shows only the selected GPU work, the header says what was selected, the diff of two pages
compares the selections, and a selection holding nothing is one line and exit 3."""

from __future__ import annotations

import pytest
from conftest import run_cli
from test_report import SectionRows

import tracelens
from tracelens.report import build_markdown, build_report
from tracelens.report.collect import collect_side
from tracelens.report.svg import Palette
from tracelens.synth import TraceBuilder

PREFILL = "void prefill_gemm<bf16>(int)"
DECODE = "void decode_attn<bf16>(int)"
OTHER_GPU = "void other_gpu_kernel(int)"


def two_phases(path, decode_us: int = 5):
    """A 'prefill' range launching PREFILL three times (40 µs each) and a 4 KB copy, then
    two 'decode' ranges launching DECODE twice each (``decode_us`` each); GPU 1 runs
    OTHER_GPU once (launched outside every range) on stream 9."""
    b = TraceBuilder("3.23.3")
    b.process(10, "python serve.py")
    b.gpu(0)
    b.gpu(1)
    t = 1_000_000
    b.nvtx_range("prefill", start=t, end=t + 200_000, pid=10, tid=10)
    for i in range(3):
        cid = b.runtime("cudaLaunchKernel", start=t + 1_000 + i * 1_000, end=t + 1_500 + i * 1_000,
                        pid=10, tid=10)  # fmt: skip
        b.kernel(PREFILL, start=t + 10_000 + i * 50_000, end=t + 50_000 + i * 50_000, pid=10,
                 correlation_id=cid)  # fmt: skip
    cid = b.runtime("cudaMemcpyAsync", start=t + 5_000, end=t + 5_500, pid=10, tid=10)
    b.memcpy("HtoD", 4096, start=t + 170_000, end=t + 172_000, pid=10, correlation_id=cid)
    for r in range(2):
        t0 = 2_000_000 + r * 100_000
        b.nvtx_range("decode", start=t0, end=t0 + 50_000, pid=10, tid=10)
        for i in range(2):
            cid = b.runtime("cudaLaunchKernel", start=t0 + 1_000 + i * 1_000,
                            end=t0 + 1_500 + i * 1_000, pid=10, tid=10)  # fmt: skip
            k0 = t0 + 10_000 + i * 10_000
            b.kernel(DECODE, start=k0, end=k0 + decode_us * 1_000, pid=10, correlation_id=cid)
    cid = b.runtime("cudaLaunchKernel", start=3_000_000, end=3_000_500, pid=10, tid=10)
    b.kernel(OTHER_GPU, start=3_010_000, end=3_040_000, pid=10, device=1, stream=9,
             correlation_id=cid)  # fmt: skip
    return b.write(path)


def side(trace, **filters):
    """The page's sections of ``trace`` narrowed by ``filters`` (Trace.filter's keywords)."""
    where = trace.filter(**filters) if filters else None
    return collect_side(trace, key="t", label=trace.path.name, top=20, name_kind="demangled",
                        palette=Palette(), omitted=[], where=where)  # fmt: skip


def header(html: str) -> dict[str, str]:
    parsed = SectionRows(html, "files")
    return dict(zip(parsed.heads, [row[0] for row in parsed.rows if row], strict=True))


@pytest.fixture
def trace_path(tmp_path):
    return two_phases(tmp_path / "phases.sqlite")


def test_every_section_shows_the_selected_work_alone(trace_path):
    with tracelens.open(trace_path) as t:
        whole, decode = side(t), side(t, nvtx="decode")
        census = t.census(where=t.filter(nvtx="decode"))
    assert [k.name for k in whole.kernels] == [PREFILL, OTHER_GPU, DECODE]
    # census, line-up, stakeout and memory: the four DECODE launches of the two ranges
    assert [(k.name, k.calls, k.total_ns) for k in decode.kernels] == [(DECODE, 4, 20_000)]
    assert census.rows() == [(100.0, 20_000, 4, 5_000.0, 5_000.0, 5_000, 5_000, 0.0, DECODE)]
    assert [(c.category, c.calls, c.total_ns) for c in decode.categories
            if c.subfamily is None] == [("attention", 4, 20_000)]  # fmt: skip
    assert [(s.name, s.stats_a["launches"]) for s in decode.stakeout] == [(DECODE, 4)]
    assert decode.memory == [] and [m["count"] for m in whole.memory] == [1]
    # the busy time, util and the timeline: of GPU 0's decode work, 2.01 ms to 2.125 ms
    assert decode.totals == {"gpu_busy_ns": 20_000}
    assert [(r["device"], r["busy_ns"]) for r in decode.util] == [(0, 20_000)]
    assert "Overview: the selected GPU work's span, 2.01 ms → 2.12 ms" in (decode.timeline.caption)
    # (a library caller's filter comes without words: the page still says there is one)
    assert decode.header[0] == ("selected", "only the GPU work the filters select")
    assert ("span", "2.04 ms (GPU busy 20.00 µs in the selection)") in decode.header
    # the header's event counts stay the export's
    assert ("GPU events", "8 kernels · 1 memcpy · memsets not captured") in decode.header


def test_device_stream_and_window_filters(trace_path):
    with tracelens.open(trace_path) as t:
        gpu1 = side(t, device=1)
        window = side(t, start=1_000_000, end=1_100_000)
        stream9 = side(t, stream=9)
    assert [(k.name, k.calls) for k in gpu1.kernels] == [(OTHER_GPU, 1)]
    assert gpu1.header[0] == ("selected", "only the GPU work on GPU 1")
    assert [(r["device"], r["busy_ns"]) for r in gpu1.util] == [(1, 30_000)]
    # the first two prefill launches end by 1.1 ms; the third starts at 1.11 ms
    assert [(k.name, k.calls) for k in window.kernels] == [(PREFILL, 2)]
    assert window.header[0] == (
        "selected", "only the GPU work in the window 1,000,000 ns → 1,100,000 ns"
    )  # fmt: skip
    assert stream9.header[0] == ("selected", "only the GPU work on stream 9")


def test_cli_report_nvtx_page_and_markdown(trace_path, tmp_path, capsys):
    page = tmp_path / "p.html"
    code, out, err = run_cli(["report", trace_path, "--nvtx", "prefill", "-o", page], capsys)
    assert (code, err) == (0, "")
    rows = header(page.read_text())
    assert (
        rows["selected"] == "only the GPU work launched inside the 1 NVTX range matching 'prefill'"
    )
    census = [r for r in SectionRows(page.read_text(), "census").rows if r]
    assert [r[0].split()[-1] for r in census] == ["prefill_gemm<bf16>(int)"], census
    code, out, err = run_cli(["report", trace_path, "--nvtx", "prefill", "-f", "markdown"], capsys)
    assert code == 0
    assert (
        "_Selected: only the GPU work launched inside the 1 NVTX range matching 'prefill'._" in out
    )
    assert "| `prefill_gemm<bf16>` | gemm | 3 | 120.0 µs | 40.00 µs | 100.0% |" in out
    assert "decode_attn" not in out and "other_gpu_kernel" not in out


def four_steps(path):
    """Four 'step' ranges, step N launching DECODE twice, N µs each."""
    b = TraceBuilder("3.23.3")
    b.process(10, "python serve.py")
    b.gpu(0)
    for n in range(1, 5):
        t0 = n * 100_000
        b.nvtx_range("step", start=t0, end=t0 + 50_000, pid=10, tid=10)
        for i in range(2):
            cid = b.runtime("cudaLaunchKernel", start=t0 + 1_000 + i * 1_000,
                            end=t0 + 1_500 + i * 1_000, pid=10, tid=10)  # fmt: skip
            k0 = t0 + 10_000 + i * 10_000
            b.kernel(DECODE, start=k0, end=k0 + n * 1_000, pid=10, correlation_id=cid)
    return b.write(path)


def test_cli_step_selects_the_steps_work(tmp_path, capsys):
    trace_path = four_steps(tmp_path / "steps.sqlite")
    with tracelens.open(trace_path) as t:
        assert t.steps().count == 4
    code, out, err = run_cli(["report", trace_path, "--step", "3", "-f", "markdown"], capsys)
    assert (code, err) == (0, "")
    assert "| `decode_attn<bf16>` | attention | 2 | 6.00 µs | 3.00 µs | 100.0% |" in out, out
    assert (
        "_Selected: only the GPU work of step 3 of 4 (steps from 4 top-level NVTX ranges like "
        "'step' that launched 100% of the GPU time)._"
    ) in out
    page = tmp_path / "s.html"
    assert run_cli(["report", trace_path, "--steps", "2:3", "-o", page], capsys)[0] == 0
    html = page.read_text()
    # the detail window is the selection's first step, numbered as in the whole trace
    assert "Detail window" in html and ": step 2 (marker steps" in html


def test_selection_without_work_is_one_line_exit_3(trace_path, capsys):
    code, out, err = run_cli(["report", trace_path, "--pid", "99"], capsys)
    assert (code, out) == (3, "")
    assert err == (
        f"tracelens: {trace_path}: nothing to report: the filters select no GPU work (no GPU "
        "work on pid 99; processes present: 10)\n"
    )
    code, out, err = run_cli(["report", trace_path, "--device", "1", "--nvtx", "decode",
                              "-f", "markdown"], capsys)  # fmt: skip
    assert (code, out) == (3, "")
    assert err == (
        f"tracelens: {trace_path}: nothing to report: the filters select no GPU work (only the "
        "GPU work launched inside the 2 NVTX ranges matching 'decode', on GPU 1)\n"
    )


def test_pair_compares_the_selections(tmp_path, capsys):
    a = two_phases(tmp_path / "a.sqlite", decode_us=5)
    b = two_phases(tmp_path / "b.sqlite", decode_us=9)
    code, out, err = run_cli(["report", a, b, "--nvtx", "decode", "-f", "markdown"], capsys)
    assert code == 0, err
    said = "only the GPU work launched inside the 2 NVTX ranges matching 'decode'"
    assert f"A: {said}" in out and f"B: {said}" in out
    # the board's kernel time is the decode kernels', 20 µs -> 36 µs; prefill is not compared
    assert "20.00 µs → 36.00 µs" in out, out[:1500]
    assert "prefill_gemm" not in out
    page = tmp_path / "pair.html"
    code, _, err = run_cli(["report", a, b, "--nvtx", "decode", "-o", page], capsys)
    assert code == 0, err
    html = page.read_text()
    assert "numerical path" in html and "left out with filters" in html


def test_pair_refuses_one_trace_filters(tmp_path, capsys):
    a = two_phases(tmp_path / "a.sqlite")
    code, out, err = run_cli(["report", a, a, "--device", "0"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        "tracelens: --device, --pid and --stream narrow the page of one trace; two traces are "
        "compared whole or by --nvtx, --step or --start/--end\n"
    )
    code, out, err = run_cli(["report", "--ranks", a, "--nvtx", "decode"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        "tracelens: the filters (--nvtx, --step, --device, --pid, --stream, --start, --end) "
        "narrow a trace's page: not --ranks or a fingerprint\n"
    )


def test_library_selection_without_words_is_still_said(trace_path):
    with tracelens.open(trace_path) as t:
        html = build_report(t, where_a=t.filter(nvtx="decode"))
        md = build_markdown(t, where_a=t.filter(nvtx="decode", device=0))
    assert header(html)["selected"] == "only the GPU work the filters select"
    assert "_Selected: only the GPU work the filters select, on GPU 0._" in md


def test_filtered_page_is_not_the_kept_whole_page(trace_path, cache_dir, tmp_path, capsys):
    # through the cache, the whole trace's page is kept; a filtered page must not be served
    # from it (nor kept as it)
    whole, decode = tmp_path / "w.html", tmp_path / "d.html"
    assert run_cli(["report", trace_path, "-o", whole], capsys)[0] == 0
    assert run_cli(["report", trace_path, "--nvtx", "decode", "-o", decode], capsys)[0] == 0
    assert "selected" not in header(whole.read_text())
    assert header(decode.read_text())["selected"].startswith("only the GPU work launched")
    again = tmp_path / "w2.html"
    assert run_cli(["report", trace_path, "-o", again], capsys)[0] == 0
    assert again.read_text() == whole.read_text()


def test_a_selection_of_copies_only_says_so(trace_path):
    # the 4 KB copy at 1.17 ms alone: no kernel in the selection, said instead of an empty
    # kernel table (found by advfilters)
    with tracelens.open(trace_path) as t:
        where = t.filter(start=1_170_000, end=1_175_000)
        html = build_report(t, where_a=where)
        md = build_markdown(t, where_a=where)
    said = "No kernel in the work shown: it is copies and memsets only"
    assert f"{said} (in the lineup and memory sections)." in html
    assert "Top 0 kernels" not in html
    assert md.endswith(f"### Top kernels\n\n_{said} (memory, above)._\n")


def test_pair_takes_each_sides_own_selection(tmp_path, capsys):
    # as `tracelens diff`: --a-nvtx / --b-nvtx and --a-start ... --b-end select in one side
    # alone, over the options of both sides
    a = two_phases(tmp_path / "a.sqlite", decode_us=5)
    b = two_phases(tmp_path / "b.sqlite", decode_us=9)
    code, out, err = run_cli(
        ["report", a, b, "--a-nvtx", "prefill", "--b-nvtx", "decode", "-f", "markdown"], capsys
    )
    assert code == 0, err
    assert "A: only the GPU work launched inside the 1 NVTX range matching 'prefill'" in out
    assert "B: only the GPU work launched inside the 2 NVTX ranges matching 'decode'" in out
    code, out, err = run_cli(
        ["report", a, b, "--nvtx", "decode", "--b-start", "2.05ms", "-f", "markdown"], capsys
    )
    assert code == 0, err
    assert "A: only the GPU work launched inside the 2 NVTX ranges matching 'decode'._" in out
    # B's second decode range alone (from 2.1 ms): its window said with the selection
    assert (
        "B: only the GPU work launched inside the 2 NVTX ranges matching 'decode', ending at "
        "or after 2,050,000 ns"
    ) in out
    code, out, err = run_cli(["report", a, b, "--a-start", "soon"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("tracelens: --a-start 'soon' is not a time")
    code, out, err = run_cli(["report", a, "--b-nvtx", "decode"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        "tracelens: --a-nvtx, --b-nvtx, --a-start, --a-end, --b-start and --b-end go with two "
        "traces: use --nvtx, --start, --end for one\n"
    )


def test_few_operations_are_drawn_over_their_whole_span(trace_path):
    # 9 operations: the detail window is the whole GPU span, not its busiest 4% (a small
    # selection's was 1.6 µs around a 40 µs copy; found by advfilters)
    with tracelens.open(trace_path) as t:
        whole, copy = side(t), side(t, start=1_170_000, end=1_175_000)
    assert whole.timeline.caption.startswith(
        "Detail window 1.01 ms → 3.04 ms (2.03 ms): the whole GPU span (few enough operations "
        "to draw them all); 9 GPU operations drawn one by one."
    )
    assert copy.timeline.caption.startswith(
        "Detail window 1.17 ms → 1.17 ms (2.00 µs): the selected work's whole GPU span (few "
        "enough operations to draw them all); 1 GPU operation drawn one by one."
    )
