"""Adversarial review of the report's filters (#12): a filtered page's words must be the
selection's, never the whole trace's, and the HTML page and the Markdown summary must agree
on what a selection holding nothing is. Fixtures built with TraceBuilder, numbers by hand."""

from __future__ import annotations

import pytest
from conftest import run_cli
from test_report_filters import side, two_phases

import tracelens
from tracelens.report import build_report
from tracelens.synth import TraceBuilder

GEMM = "void gemm_kernel<bf16>(int)"


def copies_only(path):
    """No kernel: a 'load' range launching a 1 MB HtoD copy (1.01 → 1.03 ms) and a memset
    (1.04 → 1.045 ms), a 'save' range launching a 2 MB DtoH copy (3.01 → 3.05 ms)."""
    b = TraceBuilder("3.23.3")
    b.process(10, "python x.py")
    b.gpu(0)
    b.nvtx_range("load", start=1_000_000, end=2_000_000, pid=10, tid=10)
    cid = b.runtime("cudaMemcpyAsync", start=1_001_000, end=1_001_500, pid=10, tid=10)
    b.memcpy("HtoD", 1 << 20, start=1_010_000, end=1_030_000, pid=10, correlation_id=cid)
    cid = b.runtime("cudaMemsetAsync", start=1_002_000, end=1_002_500, pid=10, tid=10)
    b.memset(4096, start=1_040_000, end=1_045_000, pid=10, correlation_id=cid)
    b.nvtx_range("save", start=3_000_000, end=4_000_000, pid=10, tid=10)
    cid = b.runtime("cudaMemcpyAsync", start=3_001_000, end=3_001_500, pid=10, tid=10)
    b.memcpy("DtoH", 2 << 20, start=3_010_000, end=3_050_000, pid=10, correlation_id=cid)
    return b.write(path)


def steps(path, n: int):
    """``n`` 'step' ranges 100 µs apart from 100 µs, step s launching GEMM twice, s µs each
    (at +10 µs and +20 µs): the last kernel of 3 steps ends at 323 µs."""
    b = TraceBuilder("3.23.3")
    b.process(10, "python x.py")
    b.gpu(0)
    for s in range(1, n + 1):
        t0 = s * 100_000
        b.nvtx_range("step", start=t0, end=t0 + 50_000, pid=10, tid=10)
        for i in range(2):
            cid = b.runtime("cudaLaunchKernel", start=t0 + 1_000 + i * 1_000,
                            end=t0 + 1_500 + i * 1_000, pid=10, tid=10)  # fmt: skip
            k0 = t0 + 10_000 + i * 10_000
            b.kernel(GEMM, start=k0, end=k0 + s * 1_000, pid=10, correlation_id=cid)
    return b.write(path)


def test_filtered_overview_is_not_titled_the_whole_trace(tmp_path):
    # the overview of a selection spans its work (2.01 → 2.125 ms, the decode kernels), not
    # the trace: its title must not call it the whole trace
    path = two_phases(tmp_path / "phases.sqlite")
    with tracelens.open(path) as t:
        html = build_report(t, where_a=t.filter(nvtx="decode"))
        whole = build_report(t)
    assert "the selected GPU work (highlighted: the detail window)" in html
    assert "whole trace (highlighted" not in html
    assert "whole trace (highlighted: the detail window)" in whole


def test_markdown_pair_with_an_empty_side_exits_3_as_the_page(tmp_path, capsys):
    # the window 390 → 460 µs holds step 4 of A (2 kernels); B's 3 steps end by 323 µs
    a, b = steps(tmp_path / "a.sqlite", 4), steps(tmp_path / "b.sqlite", 3)
    said = (
        f"tracelens: {b}: nothing to report: the filters select no GPU work (window "
        "390.0 µs–460.0 µs is outside the trace's span 100.0 µs–350.0 µs from session start)\n"
    )
    window = ["--start", "390000", "--end", "460000"]
    page = tmp_path / "p.html"
    assert run_cli(["report", a, b, *window, "-o", page], capsys) == (3, "", said)
    assert run_cli(["report", a, b, *window, "-f", "markdown"], capsys) == (3, "", said)
    # both sides holding work: the summary is made
    code, out, err = run_cli(["report", a, b, "--step", "2", "-f", "markdown"], capsys)
    assert (code, err) == (0, "") and "| kernel time | 4.00 µs | 4.00 µs | +0 ns | 1.00× |" in out


def test_left_out_util_note_of_a_selection(tmp_path, monkeypatch):
    # above the util limit (2 operations; the trace holds 9) a selection's page draws no
    # timeline either: the note must not promise a detail window, and must send the reader
    # to the commands with the page's filters, not to the whole trace's numbers
    from tracelens.report import timekeeping

    monkeypatch.setattr(timekeeping, "_max_operations", lambda: 2)
    path = two_phases(tmp_path / "phases.sqlite")
    with tracelens.open(path) as t:
        decode, whole = side(t, nvtx="decode"), side(t)
        omitted = []
        from tracelens.report.collect import collect_side
        from tracelens.report.svg import Palette

        collect_side(t, key="t", label="p", top=20, name_kind="demangled", palette=Palette(),
                     omitted=omitted, where=t.filter(nvtx="decode"))  # fmt: skip
    assert decode.util == [] and decode.timeline is None and whole.timeline is not None
    assert decode.totals == {"gpu_busy_ns": 20_000}
    notes = {o.where: o.what for o in omitted}
    assert notes["p: steps and utilization"] == (
        "left out above 2 GPU operations in the trace (9 here; they sort every operation): "
        "run `tracelens steps` and `tracelens util` with the same filters"
    )
    assert notes["p: timeline"] == (
        "left out with steps and utilization: run `tracelens timeline` with the same filters"
    )


def test_selection_of_a_trace_without_kernels_draws_its_timeline(tmp_path):
    # a trace of copies alone: its page shows util of the selection (40 µs of the DtoH
    # copy), so the timeline is not 'left out with steps and utilization'; it spans the
    # selected copy, 3.01 → 3.05 ms
    path = copies_only(tmp_path / "copies.sqlite")
    with tracelens.open(path) as t:
        save = side(t, nvtx="save")
        html = build_report(t, where_a=t.filter(nvtx="save"))
    assert [(r["device"], r["busy_ns"], r["span_ns"]) for r in save.util] == [(0, 40_000, 40_000)]
    assert save.timeline is not None
    assert "Overview: the selected GPU work's span, 3.01 ms → 3.05 ms" in save.timeline.caption
    assert "left out with steps and utilization" not in html
    assert "[CUDA memcpy HtoD]" not in html.split('id="timeline"')[1].split("</section>")[0]


@pytest.mark.parametrize("fmt", ["html", "markdown"])
def test_pair_of_copies_only_traces_with_a_filter(tmp_path, capsys, fmt):
    # no diff (no kernels): each side's sections, of its selection; never a traceback
    a = copies_only(tmp_path / "a.sqlite")
    out_file = tmp_path / "p.html"
    args = ["report", a, a, "--nvtx", "save", "-f", fmt]
    code, out, err = run_cli([*args, "-o", out_file] if fmt == "html" else args, capsys)
    assert (code, err) == (0, "")
    text = out_file.read_text() if fmt == "html" else out
    assert "left out with steps and utilization" not in text
    assert "[CUDA memcpy HtoD]" not in text and "[CUDA memcpy DtoH]" in text


def test_util_of_an_nvtx_selection_says_it_is_the_ranges_projection(tmp_path):
    # util --nvtx counts span and idle inside the selected ranges' GPU projection: two
    # decode ranges, each from its first kernel's start to its last's end (2.01 → 2.025 ms,
    # 2.11 → 2.125 ms): 30 µs of the selection's 115 µs window; the page's 30 µs span and
    # 10 µs idle must say so, as the command does, not read as the window's
    from tracelens.report.collect import collect_side
    from tracelens.report.svg import Palette

    def narrowed(t, **filters):
        omitted = []
        page = collect_side(t, key="t", label="p", top=20, name_kind="demangled",
                            palette=Palette(), omitted=omitted,
                            where=t.filter(**filters))  # fmt: skip
        return page, {o.where: o.what for o in omitted}

    path = two_phases(tmp_path / "phases.sqlite")
    with tracelens.open(path) as t:
        decode, notes = narrowed(t, nvtx="decode")
        window, window_notes = narrowed(t, start=2_000_000, end=2_200_000)
    assert [(r["span_ns"], r["busy_ns"], r["idle_ns"]) for r in decode.util] == [
        (30_000, 20_000, 10_000)
    ]
    assert notes["p: utilization"] == (
        "span and idle counted inside the GPU projection of the selected NVTX ranges (per "
        "device, from the first GPU operation launched in a range to the end of the last), "
        "30.00 µs of the 115.0 µs window: the time between them is in neither, as "
        "`tracelens util --nvtx` counts them"
    )
    # a window is no projection: its util says nothing of the kind
    assert [r["span_ns"] for r in window.util] == [200_000]
    assert "p: utilization" not in window_notes


def graph_replays(path):
    """A 'dec' range (1.0 → 2.0 ms) launching one kernel (1.01 → 1.02 ms) and two CUDA graph
    replays traced at graph level (1.2 → 1.3 ms, 1.4 → 1.5 ms), then GEMM at 3.01 ms."""
    from fixtures.builder import add_graph_replays

    from tracelens.synth import global_pid

    b = TraceBuilder("3.23.3")
    b.process(10, "python x.py")
    b.gpu(0)
    b.nvtx_range("dec", start=1_000_000, end=2_000_000, pid=10, tid=10)
    cid = b.runtime("cudaLaunchKernel", start=1_001_000, end=1_002_000, pid=10, tid=10)
    b.kernel(GEMM, start=1_010_000, end=1_020_000, pid=10, correlation_id=cid)
    replays = []
    for i in range(2):
        cid = b.runtime("cudaGraphLaunch", start=1_100_000 + i * 1_000,
                        end=1_100_500 + i * 1_000, pid=10, tid=10)  # fmt: skip
        start = 1_200_000 + i * 200_000
        replays.append((start, start + 100_000, 0, 1, None, 7, cid, global_pid(10), 3, 4))
    cid = b.runtime("cudaLaunchKernel", start=3_001_000, end=3_002_000, pid=10, tid=10)
    b.kernel(GEMM, start=3_010_000, end=3_060_000, pid=10, correlation_id=cid)
    b.write(path)
    add_graph_replays(path, replays)
    return path


def test_selection_of_a_graph_replay_alone_is_reported_in_both_formats(tmp_path, capsys):
    # the window 1.25 → 1.35 ms holds the first replay (1.2 → 1.3 ms) and no kernel: GPU
    # work, which the page shows (util: 50 µs of it in the window); the Markdown summary
    # said 'the filters select no GPU work' and exited 3
    path = graph_replays(tmp_path / "graphs.sqlite")
    window = ["--start", "1250000", "--end", "1350000"]
    page = tmp_path / "g.html"
    assert run_cli(["report", path, *window, "-o", page], capsys)[:3:2] == (0, "")
    assert "GPU busy 50.00 µs in the selection" in page.read_text()
    code, out, err = run_cli(["report", path, *window, "-f", "markdown"], capsys)
    assert (code, err) == (0, "")
    assert (
        "_Note: 1 CUDA graph replay (100.0 µs of GPU time) is not broken down by kernel and "
        "is not in these numbers; profile with --cuda-graph-trace=node to see its kernels._"
    ) in out
    # a window holding nothing still exits 3, in both
    empty = ["--start", "2500000", "--end", "2600000"]
    assert run_cli(["report", path, *empty, "-f", "markdown"], capsys)[0] == 3
    assert run_cli(["report", path, *empty, "-o", page], capsys)[0] == 3


def two_processes(path):
    """Processes 10 and 20 on GPU 0, each with one NVTX range (1.0 → 1.3 ms: 'rangeA' of
    10, 'rangeB' of 20) launching K twice: 10's on stream 7 (1.01 and 1.11 ms, 40 µs),
    20's on stream 9 (1.06 and 1.16 ms, 10 µs)."""
    b = TraceBuilder("3.23.3")
    b.process(10, "python a.py")
    b.process(20, "python b.py")
    b.gpu(0)
    b.nvtx_range("rangeA", start=1_000_000, end=1_300_000, pid=10, tid=10)
    b.nvtx_range("rangeB", start=1_000_000, end=1_300_000, pid=20, tid=20)
    for i in range(2):
        t0 = 1_000_000 + i * 100_000
        cid = b.runtime("cudaLaunchKernel", start=t0, end=t0 + 500, pid=10, tid=10)
        b.kernel(GEMM, start=t0 + 10_000, end=t0 + 50_000, pid=10, correlation_id=cid)
        cid = b.runtime("cudaLaunchKernel", start=t0 + 20_000, end=t0 + 20_500, pid=20, tid=20)
        b.kernel(GEMM, start=t0 + 60_000, end=t0 + 70_000, pid=20, correlation_id=cid,
                 stream=9)  # fmt: skip
    return b.write(path)


def test_pid_page_timeline_draws_that_process_nvtx_alone(tmp_path, capsys):
    # `tracelens timeline --pid 20` lists rangeB and 20's kernels, not 10's rangeA: the
    # page's timeline, detail window and overview, draws the same
    path = two_processes(tmp_path / "pids.sqlite")
    code, out, _ = run_cli(["timeline", path, "--pid", "20", "-f", "csv"], capsys)
    assert code == 0 and "rangeB" in out and "rangeA" not in out
    with tracelens.open(path) as t:
        html = build_report(t, where_a=t.filter(pid=20))
        whole = build_report(t)
    timeline = html.split('<section id="timeline"')[1].split("</section>")[0]
    assert "rangeB" in timeline and "rangeA" not in timeline
    assert "tid 20" in timeline and "tid 10" not in timeline
    everything = whole.split('<section id="timeline"')[1].split("</section>")[0]
    assert "rangeA" in everything and "rangeB" in everything


def test_empty_selection_names_the_window_asked_not_the_selections(tmp_path, capsys):
    # --nvtx narrows the window to the selected work's span (2.01 → 2.125 ms) inside the
    # one asked (from 5 ms): empty, at 5 ms. The reason must name the window asked, not
    # '5.00 ms–5.00 ms', which nobody asked for
    path = two_phases(tmp_path / "phases.sqlite")
    said = "window from 5.00 ms is outside the trace's span 1.00 ms–3.04 ms from session start"
    code, out, err = run_cli(["report", path, "--nvtx", "decode", "--start", "5ms"], capsys)
    assert (code, out) == (3, "")
    assert err == f"tracelens: {path}: nothing to report: the filters select no GPU work ({said})\n"
    code, out, err = run_cli(["census", path, "--nvtx", "decode", "--start", "5ms"], capsys)
    assert code == 0 and f"tracelens: {said}\n" in err
