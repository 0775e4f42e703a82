"""The report's NVTX tree under a selection, awkward range names, and the selection's words.

1. `report --start/--end`, `--step`, `--nvtx GLOB`, `--pid` narrow the NVTX tree as every
   other section: the ranges whose GPU projection overlaps the window (their GPU time cut to
   it), the matched ranges and those nested in them, the process's ranges. --device and
   --stream cannot narrow a range's projection: the page says so for them alone (it said
   'drawn for the whole capture' for every selection).
2. `tracelens nvtx` tables and Markdown show a range name with leading or trailing spaces
   quoted, as stakeout quotes names ('a ' and 'a' looked alike); so does the report's tree.
3. `diff` and the report of a pair say a selection in the same per-side sentences, window
   included (diff said '2 ranges matched in A' and nothing of --a-start/--a-end)."""

from __future__ import annotations

import pytest
from conftest import run_cli

import tracelens
from tracelens.report.collect import collect_side
from tracelens.report.nvtxtree import WINDOW_NOTE
from tracelens.report.svg import Palette
from tracelens.synth import TraceBuilder

GEMM = "void gemm_fwd(int)"
GRAD = "void gemm_bwd(int)"
OTHER = "void other_proc(int)"


def _launch(b, name, *, call, start, end, pid, device=0):
    cid = b.runtime("cudaLaunchKernel", start=call, end=call + 500, pid=pid, tid=pid)
    b.kernel(name, start=start, end=end, pid=pid, device=device, correlation_id=cid)


def steps_export(path, fwd="fwd", bwd="bwd"):
    """Process 10: four 'step' ranges 1 ms apart, each holding a ``fwd`` range (a 20 µs
    GEMM) and a ``bwd`` range (a 40 µs GRAD); step k's GPU work runs at k ms + 10..30 µs and
    + 60..100 µs, so its projection is k ms + [10 µs, 100 µs). Process 20: an 'other' range
    whose 10 µs kernel (GPU 1) runs at 1.3 ms."""
    b = TraceBuilder("3.23.3")
    b.process(10, "python train.py")
    b.process(20, "python other.py")
    b.gpu(0)
    b.gpu(1)
    for k in (1, 2, 3, 4):
        t = k * 1_000_000
        b.nvtx_range("step", start=t, end=t + 100_000, pid=10, tid=10)
        b.nvtx_range(fwd, start=t + 1_000, end=t + 40_000, pid=10, tid=10)
        _launch(b, GEMM, call=t + 2_000, start=t + 10_000, end=t + 30_000, pid=10)
        b.nvtx_range(bwd, start=t + 50_000, end=t + 90_000, pid=10, tid=10)
        _launch(b, GRAD, call=t + 51_000, start=t + 60_000, end=t + 100_000, pid=10)
    b.nvtx_range("other", start=1_000_000, end=1_200_000, pid=20, tid=20)
    _launch(b, OTHER, call=1_001_000, start=1_300_000, end=1_310_000, pid=20, device=1)
    return b.write(path)


@pytest.fixture
def export(tmp_path):
    return steps_export(tmp_path / "steps.sqlite")


def tree_of(trace, **filters):
    """The page's NVTX tree of ``trace`` narrowed by ``filters`` as (path, GPU ns, CPU ns,
    instances, GPU ops) in drawing order, its note, and what the page says it left out."""
    omitted = []
    where = trace.filter(**filters) if filters else None
    side = collect_side(trace, key="t", label="T", top=20, name_kind="demangled",
                        palette=Palette(), omitted=omitted, where=where)  # fmt: skip
    rows = []

    def walk(nodes):
        for n in nodes:
            rows.append((n.path, n.gpu_ns, n.cpu_ns, n.instances, n.gpu_ops))
            walk(n.children)

    walk(side.nvtx.roots)
    return rows, side.nvtx.note, [o.what for o in omitted if o.where == "T: NVTX tree"]


def test_whole_tree(export):
    with tracelens.open(export) as t:
        rows, note, said = tree_of(t)
    assert rows == [
        ("step", 360_000, 400_000, 4, 8),
        ("step / bwd", 160_000, 160_000, 4, 4),
        ("step / fwd", 80_000, 156_000, 4, 4),
        ("other", 10_000, 200_000, 1, 1),
    ]
    assert (note, said) == (None, [])


def test_a_window_keeps_the_ranges_it_overlaps(export):
    with tracelens.open(export) as t:
        rows, note, said = tree_of(t, start=4_000_000)
    assert rows == [
        ("step", 90_000, 100_000, 1, 2),
        ("step / bwd", 40_000, 40_000, 1, 1),
        ("step / fwd", 20_000, 39_000, 1, 1),
    ]
    assert (note, said) == (WINDOW_NOTE, [])


def test_a_window_counts_gpu_time_inside_it(export):
    # step 1's projection [1.01, 1.1) ms cut to [1.02, 1.07): fwd's 10 µs, bwd's 10 µs
    with tracelens.open(export) as t:
        rows, note, _ = tree_of(t, start=1_020_000, end=1_070_000)
    assert rows == [
        ("step", 50_000, 100_000, 1, 2),
        ("step / bwd", 10_000, 40_000, 1, 1),
        ("step / fwd", 10_000, 39_000, 1, 1),
    ]
    assert note == WINDOW_NOTE


def test_a_window_over_everything_draws_the_whole_tree(export):
    with tracelens.open(export) as t:
        whole = tree_of(t)
        windowed = tree_of(t, start=0, end=10_000_000)
    assert windowed == whole


def test_steps_keep_the_ranges_of_their_window(export):
    with tracelens.open(export) as t:
        rows, _, said = tree_of(t, step=2)
    assert rows == [
        ("step", 90_000, 100_000, 1, 2),
        ("step / bwd", 40_000, 40_000, 1, 1),
        ("step / fwd", 20_000, 39_000, 1, 1),
    ]
    assert said == []


def test_nvtx_keeps_the_matched_ranges_and_those_inside(export):
    with tracelens.open(export) as t:
        step = tree_of(t, nvtx="st*")
        fwd = tree_of(t, nvtx="fwd")
    assert step == (
        [
            ("step", 360_000, 400_000, 4, 8),
            ("step / bwd", 160_000, 160_000, 4, 4),
            ("step / fwd", 80_000, 156_000, 4, 4),
        ],
        None,
        [],
    )
    # the enclosing 'step' is drawn as the path's parent, with no numbers of its own
    assert fwd == (
        [("step", None, None, None, None), ("step / fwd", 80_000, 156_000, 4, 4)],
        None,
        [],
    )


def test_pid_keeps_its_process_ranges(export):
    with tracelens.open(export) as t:
        assert tree_of(t, pid=20) == ([("other", 10_000, 200_000, 1, 1)], None, [])


def test_device_and_stream_are_said_not_narrowed(export):
    with tracelens.open(export) as t:
        whole, _, _ = tree_of(t)
        rows, note, said = tree_of(t, device=1, stream=7)
        _, _, pid_and_gpu = tree_of(t, pid=20, device=1)
    assert (rows, note) == (whole, None)
    assert said == [
        "not narrowed to GPU 1 and stream 7: a range's GPU projection spans the work it "
        "launched on every GPU and stream (as `tracelens nvtx --gpu --group path`)"
    ]
    assert pid_and_gpu == [
        "not narrowed to GPU 1: a range's GPU projection spans the work it launched on every "
        "GPU and stream (as `tracelens nvtx --gpu --group path`)"
    ]


def test_a_selection_of_work_alone_keeps_the_whole_tree_and_says_so(export):
    # a library caller's selection (no --nvtx pattern, no window): its ranges are unknown
    from dataclasses import replace

    with tracelens.open(export) as t:
        whole, _, _ = tree_of(t)
        picked = replace(t.filter(nvtx="fwd"), nvtx_label_re=None, start_ns=None, end_ns=None)
        side = collect_side(t, key="t", label="T", top=20, name_kind="demangled",
                            palette=Palette(), omitted=(omitted := []), where=picked)  # fmt: skip
    assert [n.path for n in side.nvtx.roots] == ["step", "other"]
    assert [o.what for o in omitted if o.where == "T: NVTX tree"] == [
        "drawn for the whole capture, not only the selected work (the GPU projection of "
        "every range, as `tracelens nvtx --gpu --group path`)"
    ]


def test_the_page_says_the_window_note(export, tmp_path, capsys):
    out = tmp_path / "page.html"
    rc, _, err = run_cli(["report", str(export), "--start", "4ms", "-o", str(out)], capsys)
    assert (rc, err) == (0, "")
    page = out.read_text()
    assert f'<p class="note">{WINDOW_NOTE}.</p>'.replace("'", "&#39;") in page
    assert "drawn for the whole capture" not in page


# -- 2. names that differ only by spaces at their ends ----------------------------------


@pytest.fixture
def spaced(tmp_path):
    """The steps export whose nested ranges are 'fwd' and 'fwd ' (a trailing space)."""
    return steps_export(tmp_path / "spaced.sqlite", fwd="fwd", bwd="fwd ")


def test_nvtx_table_quotes_a_name_with_a_trailing_space(spaced, capsys):
    rc, out, err = run_cli(["nvtx", str(spaced)], capsys)
    assert (rc, err) == (0, "")
    assert [line.rstrip() for line in out.splitlines()[4:8]] == [
        "      43.7      400,000           4   100,000.0   100,000.0    100,000    100,000"
        "           0.0   PushPop   step",
        "      21.8      200,000           1   200,000.0   200,000.0    200,000    200,000"
        "           0.0   PushPop   other",
        "      17.5      160,000           4    40,000.0    40,000.0     40,000     40,000"
        "           0.0   PushPop   'fwd '",
        "      17.0      156,000           4    39,000.0    39,000.0     39,000     39,000"
        "           0.0   PushPop   fwd",
    ]


def test_nvtx_gpu_path_table_and_markdown_quote_it(spaced, capsys):
    rc, out, _ = run_cli(["nvtx", str(spaced), "--gpu", "--group", "path"], capsys)
    assert rc == 0
    assert "'step / fwd '" in out and "step / fwd " not in out.replace("'step / fwd '", "")
    rc, out, _ = run_cli(["nvtx", str(spaced), "--gpu", "--group", "path", "-f", "markdown"],
                         capsys)  # fmt: skip
    assert rc == 0
    rows = [line for line in out.splitlines() if line.startswith("|") and "step /" in line]
    assert [r.split("|")[-2].strip() for r in rows] == ["'step / fwd '", "step / fwd"]


def test_nvtx_csv_keeps_the_name_exact(spaced, capsys):
    rc, out, _ = run_cli(["nvtx", str(spaced), "-f", "csv"], capsys)
    assert rc == 0
    assert sorted(line.rsplit(",", 1)[-1] for line in out.splitlines()[1:]) == [
        "fwd", "fwd ", "other", "step"
    ]  # fmt: skip


def test_a_leading_space_and_a_path_name_are_quoted_too():
    from tracelens.nvtx import shown_name

    assert [shown_name(n) for n in (" fwd", "fwd", "step  / fwd", "step / fwd", "a\tb ")] == [
        "' fwd'", "fwd", "'step  / fwd'", "step / fwd", "'a\\x09b '"
    ]  # fmt: skip


def test_the_report_tree_quotes_it(spaced):
    with tracelens.open(spaced) as t:
        side = collect_side(t, key="t", label="T", top=20, name_kind="demangled",
                            palette=Palette(), omitted=[])  # fmt: skip
    step = side.nvtx.roots[0]
    assert [(n.name, n.shown) for n in step.children] == [("fwd ", "'fwd '"), ("fwd", "fwd")]


# -- 3. the selection in the same words from diff and the report's page of a pair ---------

STEP_NOTE = (
    "only the GPU work of step 3 of 4 (steps from 4 top-level NVTX ranges like "
    "'decode_step_1' that launched {}% of the GPU time)"
)
SELECTIONS = {
    "nvtx on both": (
        ["--nvtx", "decode_step_*"],
        [
            "A: only the GPU work launched inside the 4 NVTX ranges matching 'decode_step_*'",
            "B: only the GPU work launched inside the 4 NVTX ranges matching 'decode_step_*'",
        ],
    ),
    "a-nvtx only": (
        ["--a-nvtx", "decode_step_3"],
        ["A: only the GPU work launched inside the 1 NVTX range matching 'decode_step_3'"],
    ),
    "a window, b-nvtx": (
        ["--a-start", "2.01s", "--a-end", "2.02s", "--b-nvtx", "decode_step_3"],
        [
            "A: only the GPU work in the window 2,010,000,000 ns → 2,020,000,000 ns",
            "B: only the GPU work launched inside the 1 NVTX range matching 'decode_step_3'",
        ],
    ),
    "step": (
        ["--step", "3"],
        ["A: " + STEP_NOTE.format(69), "B: " + STEP_NOTE.format(19)],
    ),
}


@pytest.mark.parametrize("case", list(SELECTIONS))
def test_diff_and_report_say_the_selection_alike(case, capsys):
    import json

    flags, sentences = SELECTIONS[case]
    rc, out, _ = run_cli(["diff", "--demo", *flags, "-f", "json"], capsys)
    assert rc == 0
    notes = json.loads(out)["notes"]
    assert notes[: len(sentences)] == sentences
    # said once: not again as a count of ranges
    assert not [n for n in notes if "matched in" in n]
    rc, out, _ = run_cli(["report", "--demo", *flags, "-f", "markdown"], capsys)
    assert rc == 0
    said = [line for line in out.splitlines() if line.startswith(("_Note: A: ", "_Note: B: "))]
    assert said == [f"_Note: {s}._" for s in sentences]
