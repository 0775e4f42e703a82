"""tracelens diff: the evidence board on the demo pair, no clue on identical traces,
'not comparable' on different programs, and the --fail-if gates."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest
from conftest import REFERENCE, needs_shared, run_cli, shared_traces

import tracelens
from tracelens.compare import align_sequences, check_gates, diff
from tracelens.demo import demo_path


@pytest.fixture(scope="module")
def demo_diff():
    with tracelens.open(demo_path("bs1")) as a, tracelens.open(demo_path("bs16")) as b:
        return diff(a, b)


def _clue(d, clue_id):
    found = [c for c in d.clues if c.id == clue_id]
    assert found, f"no {clue_id} clue in {[c.id for c in d.clues]}"
    return found


def _reshape(demo_diff):
    (c,) = [x for x in _clue(demo_diff, "per_call_outlier") if "reshape_and_cache" in x.clue]
    return c


def test_demo_names_the_attention_per_call_outlier(demo_diff):
    c = _reshape(demo_diff)
    assert "reshape_and_cache_flash_kernel" in c.clue and "attention-related" in c.clue
    assert "5.12× longer per call" in c.clue
    # per decode step (the steps' own work, compare/outside.py): 112 calls, not the whole
    # capture's 140 (a prefill's among them)
    assert "112 calls in both" in c.evidence
    assert c.strength == "strong"


def test_demo_names_the_gemm_variant_swap(demo_diff):
    (c,) = _clue(demo_diff, "variant_swap")
    assert c.clue == "gemm: variants swapped"
    # the decode steps' GEMMs: the prefill's (101 ms of one GEMM in B) are the outside clue
    assert c.evidence.startswith("5 gemm kernels in B (22.25 ms, 452 calls) that A does not run")
    assert "A ran 5 others (19.87 ms" in c.evidence
    assert "not batch-invariant" in c.verdict


def test_demo_names_copy_and_memset_growth(demo_diff):
    copies = {c.clue: c for c in _clue(demo_diff, "copy_growth")}
    d2d = copies["+120% device-to-device copies"]  # in the decode steps
    assert d2d.evidence == "20 → 44 copies, 55.1 MB → 136.9 MB"
    (m,) = _clue(demo_diff, "memset_growth")
    assert m.clue == "+30% memsets" and m.evidence.startswith("276 → 360 memsets")


def test_demo_names_same_count_different_path(demo_diff):
    (c,) = _clue(demo_diff, "same_count_different_path")
    assert c.clue == "same launch count (1,604 in both), different kernels"
    assert "first divergence at launch #" in c.evidence
    assert "same graph, different path" in c.verdict


def test_demo_names_the_cascade_merge_as_the_numerical_cause(demo_diff):
    # In the decode steps cascade attention's merge kernel replaced the split-KV combine:
    # one attention_merge line, each side's kernel named
    (c,) = [x for x in demo_diff.clues if "attention_merge" in x.clue]
    assert c.id == "danger_swapped" and "high" in c.clue
    assert c.evidence.startswith("only in B: vllm::merge_attn_states_kernel (112 calls")
    assert "only in A: flash::flash_fwd_splitkv_combine_kernel (112 calls" in c.evidence
    assert "disable_cascade_attn=True" in c.verdict
    # the explanation ranks before the observations without a time impact
    ids = [x.id for x in demo_diff.clues]
    assert ids.index("danger_swapped") < ids.index("memset_growth")


def test_demo_evidence_is_not_weak(demo_diff):
    ids = {c.id for c in demo_diff.clues}
    assert "weak_evidence" not in ids and "not_comparable" not in ids
    assert demo_diff.comparable


def test_demo_tables(demo_diff):
    k = demo_diff.kernels
    row = k.filter(k["name"].str.contains("reshape_and_cache")).to_dicts()[0]
    assert (row["a_instances"], row["b_instances"], row["status"]) == (140, 140, "both")
    assert round(row["per_call_ratio"], 2) == 5.12
    assert demo_diff.figures["launch_ratio"] == 1.0
    assert demo_diff.figures["new_danger"] >= 1
    (al,) = demo_diff.alignment
    assert al.launches_a == al.launches_b == 1949 and not al.identical
    replaced = {(x.split("<")[0], y.split("<")[0]) for x, y, _ in al.replaced}
    assert any("splitkv_combine" in x and "merge_attn_states" in y for x, y in replaced)


def test_identical_traces_report_no_change(tmp_path):
    a = tmp_path / "a.sqlite"
    b = tmp_path / "b.sqlite"
    shutil.copyfile(demo_path("bs16"), a)
    shutil.copyfile(demo_path("bs16"), b)
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        d = diff(ta, tb)
    assert d.clues == ()
    assert d.comparable
    assert all(al.identical for al in d.alignment)
    assert set(d.kernels["status"].to_list()) == {"both"}
    assert d.figures["gpu_time_ratio"] == 1.0 and d.figures["new_danger"] == 0


def test_identical_traces_cli_says_so(tmp_path, capsys):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    shutil.copyfile(demo_path("bs1"), a)
    shutil.copyfile(demo_path("bs1"), b)
    rc, out, _ = run_cli(["diff", a, b, "-f", "markdown"], capsys)
    assert rc == 0
    assert "No difference found: no rule fired on these two traces." in out


KERNEL_TRACES = [
    p.stem for p in shared_traces() if (REFERENCE / f"{p.stem}_gpukernsum.csv").exists()
]


@needs_shared
@pytest.mark.parametrize("pair", list(itertools.combinations(KERNEL_TRACES, 2))[:12])
def test_different_programs_are_not_comparable(pair, trace_copies):
    with tracelens.open(trace_copies[pair[0]]) as a, tracelens.open(trace_copies[pair[1]]) as b:
        d = diff(a, b)
        graphs = a.graph_replays()[0] or b.graph_replays()[0]
    assert not d.comparable
    # No causal clue; the work graph replays hide is the one caveat that stays.
    # a side whose graph replays took more GPU time than its kernels: they cannot be matched
    hidden = any(s.graph[1] > (s.totals["kernel_time_ns"] or 0) for s in d.sides)
    expected = ["kernels_in_graphs" if hidden else "not_comparable"]
    expected += ["graph_replays_hidden"] if graphs else []
    assert [c.id for c in d.clues] == expected


@needs_shared
@pytest.mark.parametrize("graph_side", ["A", "B"])
def test_not_comparable_says_the_graph_replays_are_why(graph_side, trace_copies, capsys):
    """The a100 NVTX trace against its CUDA-graph twin: 0% kernels in common because the
    twin's GPU time is in replays traced at graph level. The not-comparable clue itself
    says so (it said only 'these look like different programs'), beside the caveat."""
    pair = [
        trace_copies["nsys2024.6_a100_2.7B_nvtx"],
        trace_copies["nsys2024.6_a100_2.7B_cudagraph"],
    ]
    rc, out, err = run_cli(["diff", *pair[:: 1 if graph_side == "B" else -1], "-f", "json"], capsys)
    board = json.loads(out)
    assert (rc, err, board["comparable"]) == (0, "", False)
    first, caveat = board["clues"]
    # Not 'the traces are not comparable', strong, beside a verdict that says it cannot tell:
    # the clue says what it knows, at the strength of what it knows.
    assert (first["id"], caveat["id"]) == ("kernels_in_graphs", "graph_replays_hidden")
    assert first["clue"] == (
        f"the kernel sequences cannot be compared: {graph_side}'s kernels run inside CUDA "
        "graphs traced at graph level"
    )
    assert first["strength"] == "moderate"
    assert first["evidence"].startswith(
        f"most of {graph_side}'s GPU time is in 10 CUDA graph replays traced at graph level "
        "(7.81 s vs 78.27 µs of kernels): the kernels they ran are not listed; so the kernels "
        "listed hardly match ("
    )
    assert first["verdict"] == (
        f"the export does not list the kernels of {graph_side}'s graph replays: there are no "
        "kernels to match, which says nothing of whether these are different programs; "
        f"profile {graph_side} again with nsys --cuda-graph-trace=node to compare their kernels"
    )
    # The HTML page's line above the board says the same (it said 'These traces do not look
    # comparable: totals below mislead.')
    with tracelens.open(pair[0]) as a, tracelens.open(pair[1]) as b:
        d = diff(a, b) if graph_side == "B" else diff(b, a)
    assert d.incomparable_note == (
        f"The kernel sequences cannot be compared: {graph_side}'s kernels run inside CUDA "
        "graphs traced at graph level."
    )


def test_a_not_comparable_page_note(tmp_path):
    """Unrelated programs keep their strong clue and the page's warning."""
    from tracelens.compare.model import Clue

    d = diff(demo_path("bs1"), demo_path("bs16"))
    assert d.comparable and d.incomparable_note is None
    clue = Clue("not_comparable", "the traces are not comparable", "", "", "strong", "kernels")
    from dataclasses import replace

    assert replace(d, comparable=False, clues=(clue,)).incomparable_note == (
        "These traces do not look comparable: totals below mislead."
    )


@needs_shared
def test_trace_without_kernels_is_an_error(trace_copies, capsys):
    rc, out, err = run_cli(
        ["diff", trace_copies["nsys2021.3_cpu_only_no_cuda"], trace_copies["nsys2026.1_mock_2k"]],
        capsys,
    )
    assert rc == 3 and out == ""
    assert err.endswith("no CUDA kernel data: was it captured with -t cuda?\n")


def test_gates_trip_and_pass(demo_diff):
    results = check_gates(demo_diff, ["new_danger>0", "gpu_time_ratio < 1", "launch_ratio==1"])
    assert [(g.figure, g.tripped) for g in results] == [
        ("new_danger", True),
        ("gpu_time_ratio", False),
        ("launch_ratio", True),
    ]


@pytest.mark.parametrize(
    "expr, message",
    [
        (
            "gpu_time_ratio >> 2",
            "tracelens: --fail-if 'gpu_time_ratio >> 2' is not FIGURE OP NUMBER (e.g. gpu_time_ratio>1.05); OP is one of < <= > >= == !=\n",
        ),
        ("speed>1", "tracelens: --fail-if: unknown figure 'speed'; known: "),
    ],
)
def test_bad_gates_are_usage_errors(expr, message, capsys):
    rc, out, err = run_cli(["diff", "--demo", "--fail-if", expr, "-f", "json"], capsys)
    assert rc == 2 and out == ""
    assert err.startswith(message) and err.count("\n") == 1


def test_cli_gate_exit_codes(capsys):
    rc, out, err = run_cli(["diff", "--demo", "--fail-if", "new_danger>0", "-f", "json"], capsys)
    assert rc == 1
    assert json.loads(out)["figures"]["new_danger"] >= 1
    assert err.startswith("tracelens: gate tripped: new_danger>0 (new_danger = ")
    rc, _, err = run_cli(
        ["diff", "--demo", "--fail-if", "gpu_time_ratio>100", "-f", "json"], capsys
    )
    assert (rc, err) == (0, "")


def test_cli_table_puts_the_evidence_board_first(capsys):
    rc, out, _ = run_cli(["diff", "--demo"], capsys)
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "tracelens diff: A = bs1.sqlite  →  B = bs16.sqlite"
    assert lines[2].strip() == "Evidence board"
    assert out.index("Evidence board") < out.index("Totals") < out.index("Kernels, most surprising")


def test_cli_markdown_is_pasteable(capsys):
    rc, out, _ = run_cli(["diff", "--demo", "-f", "markdown", "--top", "3"], capsys)
    assert rc == 0
    assert out.startswith("## tracelens diff: `bs1.sqlite` (A) → `bs16.sqlite` (B)\n")
    assert "| Clue | Impact | Evidence | Verdict |" in out
    assert "more kernels not shown (use --top)" in out


def test_per_side_windows(capsys):
    # the first 5 ms of each run: far fewer launches on both sides
    starts = []
    for name in ("bs1", "bs16"):
        with tracelens.open(demo_path(name)) as t:
            starts.append(t.info.start_ns)
    window = [
        "--a-start",
        str(starts[0]),
        "--a-end",
        str(starts[0] + 5_000_000),
        "--b-start",
        str(starts[1]),
        "--b-end",
        str(starts[1] + 5_000_000),
    ]
    rc, out, _ = run_cli(["diff", "--demo", "-f", "json", *window], capsys)
    assert rc == 0
    data = json.loads(out)
    launches = {r["metric"]: (r["a"], r["b"]) for r in data["totals"]}["kernel launches"]
    assert 0 < launches[0] < 1949 and 0 < launches[1] < 1949


def test_usage_errors(capsys):
    assert run_cli(["diff", "--demo", demo_path("bs1")], capsys)[2] == (
        "tracelens: give either two traces A B or --demo, not both\n"
    )
    # a demo name after the pair commands' bare --demo (one-trace commands take one)
    named = (
        "tracelens: --demo takes no name here: it means the demo pair, bs1 (A) and bs16 (B); "
        "drop {}\n"
    )
    for command in (
        ["diff"],
        ["report", "-o", "never.html"],
        ["diff", "--fail-if", "path_changed"],
    ):
        assert run_cli([*command, "--demo", "bs16"], capsys) == (2, "", named.format("bs16"))
    assert not Path("never.html").exists()
    assert run_cli(["diff", demo_path("bs1")], capsys)[2] == (
        "tracelens: diff needs two traces: A (baseline) and B, or --demo\n"
    )
    assert run_cli(["diff", "--demo", "--name", "mangled"], capsys)[2] == (
        "tracelens: unknown --name 'mangled'; use one of: demangled, short\n"
    )


def test_align_sequences_finds_replacements_and_insertions():
    a = ["x", "y", "z", "w"]
    b = ["x", "q", "z", "w", "v"]
    al = align_sequences(0, a, b)
    assert al.first_divergence == 1
    assert (al.a_at_divergence, al.b_at_divergence) == ("y", "q")
    assert al.matched_in_order == 3
    assert al.replaced == (("y", "q", 1),)
    assert al.only_in_b == (("v", 1),)
    same = align_sequences(0, a, list(a))
    assert same.identical and same.matched_in_order == 4


def test_gpu_busy_merges_overlapping_kernels_per_device(tmp_path):
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.25.0")
    b.process(100, "app")
    # device 0: [0,10] and [5,15] overlap (busy 15), [12,14] inside, [20,30] apart (10)
    for start, end in ((0, 10), (5, 15), (12, 14), (20, 30)):
        b.kernel("k0", start=1000 + start, end=1000 + end, pid=100, device=0)
    b.kernel("k1", start=1000, end=1100, pid=100, device=1)  # another device: 100
    path = b.write(tmp_path / "overlap.sqlite")
    from tracelens.compare.collect import trace_totals

    with tracelens.open(path) as t:
        totals = trace_totals(t)
    assert totals["gpu_busy_ns"] == 15 + 10 + 100
    assert totals["kernel_time_ns"] == 10 + 10 + 2 + 10 + 100
    assert totals["kernel_launches"] == 5 and totals["distinct_kernels"] == 2


def test_nvtx_range_narrows_both_sides(capsys):
    rc, out, _ = run_cli(["diff", "--demo", "--nvtx", "decode_step_3", "-f", "json"], capsys)
    assert rc == 0
    data = json.loads(out)
    totals = {r["metric"]: (r["a"], r["b"]) for r in data["totals"]}
    # one decode step: 28 layers x 14 launches + the step's own launches, same in both
    assert totals["kernel launches"] == (401, 401)
    ids = [c["id"] for c in data["clues"]]
    assert "per_call_outlier" in ids and "danger_swapped" in ids
    # after the caveats, the board is ordered by impact, largest first
    impacts = [abs(c["impact_ns"]) for c in data["clues"] if c["impact_ns"] is not None]
    assert impacts == sorted(impacts, reverse=True)


def test_nvtx_glob_per_side(capsys):
    rc, out, _ = run_cli(
        ["diff", "--demo", "--a-nvtx", "decode_step_*", "--b-nvtx", "decode_step_*", "-f", "json"],
        capsys,
    )
    assert rc == 0
    data = json.loads(out)
    totals = {r["metric"]: (r["a"], r["b"]) for r in data["totals"]}
    assert totals["kernel launches"] == (1604, 1604)
    # the board says how many ranges selected each side's work, as the report's page does
    assert data["nvtx_ranges"] == [4, 4]
    assert data["notes"][:2] == [
        f"{side}: only the GPU work launched inside the 4 NVTX ranges matching 'decode_step_*'"
        for side in "AB"
    ]


def test_nvtx_range_count_on_the_board(capsys):
    rc, out, _ = run_cli(["diff", "--demo", "--nvtx", "decode_step_3"], capsys)
    assert rc == 0
    assert [line for line in out.splitlines() if "NVTX range matching" in line] == [
        f"Note: {side}: only the GPU work launched inside the 1 NVTX range matching "
        "'decode_step_3'."
        for side in "AB"
    ]


def test_unknown_nvtx_label_suggests_close_ones(capsys):
    rc, out, err = run_cli(["diff", "--demo", "--nvtx", "decode_stp_3"], capsys)
    assert (rc, out) == (2, "")
    assert err.endswith(
        "bs1.sqlite: no NVTX range labelled 'decode_stp_3'; "
        "closest: 'decode_step_3', 'decode_step_4', 'decode_step_2'\n"
    )


def _build(tmp_path, name, kernels, *, nvtx=()):
    """A small export: kernels = [(kernel name, gpu start, gpu end, api start)]."""
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.25.0")
    b.process(100, "app")
    for text, start, end in nvtx:
        b.nvtx_range(text, start=start, end=end, pid=100, tid=100)
    for kname, start, end, api in kernels:
        cid = b.runtime("cudaLaunchKernel_v7000", start=api, end=api + 5, pid=100, tid=100)
        b.kernel(kname, start=start, end=end, pid=100, correlation_id=cid)
    return b.write(tmp_path / f"{name}.sqlite")


def test_a_uniform_slowdown_is_a_clue(tmp_path):
    names = ["gemm_a", "norm_b", "act_c"]
    ka = [(n, 1000 + i * 100, 1000 + i * 100 + 40, 900 + i * 100) for i, n in enumerate(names * 10)]
    kb = [(n, s, s + 2 * (e - s), api) for n, s, e, api in ka]
    with (
        tracelens.open(_build(tmp_path, "a", ka)) as a,
        tracelens.open(_build(tmp_path, "b", kb)) as b,
    ):
        d = diff(a, b)
    # its 10 steps of 3 kernels are longer too (by impact, after the uniform change)
    assert [c.id for c in d.clues] == ["uniform_change", "step_time"]
    assert d.clues[0].clue == "the typical kernel is 2.00× longer per call"
    assert "A: 10 steps" in d.clues[1].evidence and "B: 10 steps" in d.clues[1].evidence
    assert "launches 30 → 30" in d.clues[0].evidence


def test_nvtx_selects_the_gpu_work_launched_inside_the_range(tmp_path):
    # The CPU runs ahead: step_0's launches execute on the GPU during step_1's CPU time, so a
    # time window would mix the two steps; the selection does not.
    kernels = [("k_x", 500, 600, 10), ("k_y", 550, 800, 110), ("k_z", 560, 570, 300)]
    path = _build(tmp_path, "lag", kernels, nvtx=[("step_0", 0, 100), ("step_1", 100, 200)])
    from tracelens.filters import select_nvtx

    with tracelens.open(path) as t:
        counts = {}
        for pattern in ("step_0", "step_1", "step_*"):
            where, ranges = select_nvtx(t, pattern)
            names = t.census(where=where)["name"].to_list()
            counts[pattern] = (ranges, sorted(names))
    assert counts == {
        "step_0": (1, ["k_x"]),
        "step_1": (1, ["k_y"]),
        "step_*": (2, ["k_x", "k_y"]),
    }


def test_nvtx_range_that_launched_nothing_is_a_usage_error(tmp_path, capsys):
    path = _build(tmp_path, "idle", [("k_x", 500, 600, 10)], nvtx=[("idle", 300, 400)])
    rc, out, err = run_cli(["diff", path, path, "--nvtx", "idle"], capsys)
    assert (rc, out) == (2, "")
    assert err.endswith(
        "idle.sqlite: the 1 NVTX range(s) labelled 'idle' launched no GPU work "
        "(no kernel, memcpy or memset whose API call is inside them)\n"
    )


def test_more_blocks_per_call_is_named_as_more_work(demo_diff):
    c = _reshape(demo_diff)
    assert "blocks per launch 1 → 16 (16.00×)" in c.evidence  # per decode step
    assert "does more (or less) work per call" in c.verdict


def test_time_accounting_left_out_above_the_launch_limit(monkeypatch):
    """Above threshold.util_max_launches launches per trace the diff leaves GPU time
    accounting out and says so; at the limit it is in."""
    from tracelens.compare import clues

    real = clues.threshold
    with tracelens.open(demo_path("bs1")) as a, tracelens.open(demo_path("bs16")) as b:
        launches = a.info.count("kernel")
        monkeypatch.setattr(
            clues, "threshold", lambda n: launches - 1 if n == "util_max_launches" else real(n)
        )
        left_out = diff(a, b)
        monkeypatch.setattr(
            clues, "threshold", lambda n: launches + 10**6 if n == "util_max_launches" else real(n)
        )
        kept = diff(a, b)
    note = (
        "GPU time accounting (compute, exposed communication, idle) left out above "
        f"{launches - 1:,} launches per trace, for speed: run `tracelens util` on each"
    )
    assert note in left_out.notes
    assert not any("GPU time accounting" in n for n in kept.notes)
    assert real("util_max_launches") == 20_000_000


# -- naming the sides ---------------------------------------------------------------------
def test_a_file_compared_with_itself_is_named_once_and_said_to_be_the_same(capsys):
    path = demo_path("bs1")
    rc, out, _ = run_cli(["diff", str(path), str(path)], capsys)
    assert rc == 0
    assert out.splitlines()[0] == f"tracelens diff: A = {path.name}  →  B = {path.name}"
    assert f"Note: A and B are the same file ({path.name}), compared with itself." in out
    with tracelens.open(path) as a, tracelens.open(path) as b:
        d = diff(a, b)
    assert (d.label_a, d.label_b) == (path.name, path.name)
    assert not d.clues and set(d.totals["delta"].drop_nulls().to_list()) == {0}


def test_a_file_compared_with_itself_is_read_once_unless_the_sides_differ(monkeypatch):
    """One file on both sides, through the same filter: one read (the same Side twice);
    other windows on each side: a read each, and the board sees the difference."""
    from tracelens.filters import EventFilter
    from tracelens.trace import Trace

    path = demo_path("bs1")
    reads: list[str] = []
    query = Trace.query

    def recorded(trace, name, **params):
        reads.append(name)
        return query(trace, name, **params)

    monkeypatch.setattr(Trace, "query", recorded)
    with tracelens.open(path) as a, tracelens.open(path) as b:
        same = diff(a, b)
        assert reads.count("work_in_order") == 1 and same.sides[0] is same.sides[1]
        reads.clear()
        totals = same.sides[0].totals
        half = EventFilter(end_ns=(totals["first_ns"] + totals["last_ns"]) // 2)
        windowed = diff(a, b, where_b=half)
    assert reads.count("work_in_order") == 2 and windowed.sides[0] is not windowed.sides[1]
    assert windowed.sides[1].totals["kernel_launches"] < windowed.sides[0].totals["kernel_launches"]


def test_two_files_of_one_name_are_told_apart_by_their_directories(tmp_path, capsys):
    for run in ("run1", "run2"):
        (tmp_path / "exp" / run).mkdir(parents=True)
        shutil.copy(demo_path("bs1"), tmp_path / "exp" / run / "trace.sqlite")
    a, b = (str(tmp_path / "exp" / run / "trace.sqlite") for run in ("run1", "run2"))
    rc, out, _ = run_cli(["diff", a, b], capsys)
    assert out.splitlines()[0] == "tracelens diff: A = run1/trace.sqlite  →  B = run2/trace.sqlite"
    assert "same file" not in out
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        assert diff(ta, tb, label_a="x", label_b="x").label_a == "A (x)"
        assert diff(ta, tb, label_a="base").label_b == "trace.sqlite"


def test_demo_steps_that_hold_little_of_the_gpu_time_are_compared_on_their_own_work(demo_diff):
    """B's decode-step NVTX ranges launched 19% of its GPU time (A's 69%). The board used
    to leave their steady-step clue out, since it contradicted a wall time per step that
    spread the prefill over the steps; now the per-step lines count the steps' own work
    (compare/outside.py), so the step clue and the lead line agree."""
    lead, step = (_clue(demo_diff, i)[0] for i in ("time_accounting", "step_time"))
    assert step.clue == "steady-state step: median 7.18 ms → 8.53 ms (+1.34 ms, 1.19×)"
    assert lead.clue == "GPU wall time per step: 7.42 ms → 8.74 ms (+1.32 ms)"
    (note,) = [n for n in demo_diff.notes if n.startswith("steps: ")]
    assert note.startswith("steps: A 4 steps, from 4 top-level NVTX ranges like 'decode_step_1'")
    assert "that launched 69% of the GPU time; B 4 steps, from " in note
    assert note.endswith("that launched 19% of the GPU time")


def test_per_step_clues_say_which_steps_they_count(demo_diff):
    """Clue impacts per step count trace.steps() when both sides have steps that hold most
    of their GPU time, else the launch motif's repetitions (the alignment's steps). The
    board says so where the steps note alone does not: the motif repeats another number of
    times, or the impacts count the motif; where the counts agree, or there is no motif,
    nothing. The demo's decode-step ranges hold 19% of B's GPU time: its impacts count the
    steps' own work, 4 steps (they counted the motif's 5 repetitions, one the prefill)."""
    from types import SimpleNamespace

    from tracelens.compare.notes import _motif_note

    assert (demo_diff.steps_a, demo_diff.steps_b) == (4, 4)
    nvtx, none = SimpleNamespace(count=4), SimpleNamespace(count=0)
    (note,) = _motif_note((4, 4), (8, 6), nvtx, nvtx)
    assert note.startswith("per-step clue impacts count the steps above; ")
    assert "the launch sequence on the busiest device repeats A 8, B 6 times" in note
    for steps_b in (nvtx, none):  # per repetition: the steps hold too little, or B has none
        (note,) = _motif_note((8, 6), (8, 6), nvtx, steps_b)
        assert "launch sequence on the busiest device: A 8, B 6" in note
        assert "not the steps above" in note
    (note,) = _motif_note((8, 6), (8, 6), None, none)
    assert note.endswith("A 8, B 6")
    assert _motif_note((4, 4), (4, 4), nvtx, nvtx) == []
    assert _motif_note((4, 4), (None, None), nvtx, nvtx) == []
    assert _motif_note((None, None), (None, None), None, None) == []


def test_demo_danger_per_step_figures_have_no_float_noise(demo_diff):
    """The JSON a user pastes into a PR said 22.400000000000002 calls per step (polars
    divides by the reciprocal); the per-step figures are rounded to 6 decimals."""
    for column in ("a_calls_per_step", "b_calls_per_step", "a_per_step_ns", "b_per_step_ns"):
        values = demo_diff.danger[column].to_list()
        assert values and all(v is not None and round(v, 6) == v for v in values), column
