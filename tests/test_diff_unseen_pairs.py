"""tracelens diff on six pairs no other test builds, read as a profiler would read them: what
the board must say and what it must not claim. A capture 3x longer (per step: no
regression), one dominant GEMM 20% slower (named, though under the 1.5x outlier bar), the
same work over two overlapping streams (overlap moved the step, not compute), unrelated
programs (not comparable), cascade attention at batch 16 (the merge kernel named as a
determinism risk), and the same run with another session start, time offset and correlation
ids (no difference)."""

from __future__ import annotations

import re

import pytest
from conftest import run_cli
from fixtures.builder import DIRECT_COPY, FILL, FLASH_FWD, REDUCE_SUM, XMMA_GEMM
from fixtures.builder import _Recorder as Recorder
from test_diff_pairs import GEMM_B as BIG_GEMM
from test_diff_pairs import LAYERNORM, SOFTMAX, STEP

import tracelens
from tracelens.compare import diff
from tracelens.compare.render import markdown, table
from tracelens.synth import TraceBuilder

PID = 5151
# vLLM decode kernels (shared/kernel_names/KERNEL_NAMES.md, "LLM serving kernels")
RMS = "void vllm::rms_norm_kernel<c10::BFloat16, (int)8, (int)3>(T1 *, const T1 *, const T1 *, float, int, int)"
ROPE = "void vllm::rotary_embedding_kernel<c10::BFloat16, c10::BFloat16, true>(const long *, T1 *, T1 *, const T2 *, int, long, long, long, int, int, int)"
SILU = "void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>(T1 *, const T1 *, int)"
CACHE = "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(const T1 *, const T1 *, T2 *, T2 *, const long *, long, long, long, long, long, int, int, int, const float *, const float *)"
MERGE = "void vllm::merge_attn_states_kernel<__nv_bfloat16, (unsigned int)128>(T1 *, float *, const T1 *, const float *, const T1 *, const float *, unsigned int, unsigned int, unsigned int, unsigned int)"
NVJET = "nvjet_tst_128x96_64x7_4x1_v_bz_bias_TNT"
ARGMAX = "void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, (int)4>>(T3)"

# A training step: (kernel, ns per call), test_diff_pairs's
TRAIN = STEP
# A step one GEMM dominates (300 of 346.5 µs of kernel time)
DOMINATED = [
    (LAYERNORM, 4_000),
    (BIG_GEMM, 300_000),
    (FLASH_FWD, 30_000),
    (SOFTMAX, 6_000),
    (FILL, 1_500),
    (REDUCE_SUM, 3_000),
    (DIRECT_COPY, 2_000),
]
# A vLLM decode step (batch 1: one attention pass)
DECODE = [
    (RMS, 3_000),
    (NVJET, 25_000),
    (ROPE, 2_000),
    (CACHE, 2_500),
    (FLASH_FWD, 20_000),
    (NVJET, 15_000),
    (RMS, 3_000),
    (NVJET, 30_000),
    (SILU, 4_000),
    (NVJET, 28_000),
    (ARGMAX, 5_000),
]
# Batch 16 with cascade attention: the shared prefix once, the suffixes, then an LSE merge
CASCADE = [*DECODE[:4], (FLASH_FWD, 20_000), (FLASH_FWD, 12_000), (MERGE, 3_000), *DECODE[5:]]


def recorder(cmd="python train.py", *, session=None, first_correlation=None) -> Recorder:
    r = Recorder("3.25.0")
    if session is not None:  # another capture: its own session start
        r.b = TraceBuilder("3.25.0", session_start_utc_ns=session)
    if first_correlation is not None:  # CUPTI numbers each capture's API calls anew
        r.b._next_correlation = first_correlation
    r.process(PID, cmd)
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    return r


def serial(tmp_path, stem, steps, step, *, scale=None, r=None, t=1_000_000):
    """``steps`` repetitions of ``step`` on one stream, 1 µs between kernels and 20 µs of
    idle GPU between steps; ``scale``: a per-call factor by kernel name."""
    r = r or recorder()
    for _ in range(steps):
        for name, dur in step:
            d = int(dur * (scale or {}).get(name, 1.0))
            r.kernel(name, t, d, pid=PID)
            t += d + 1_000
        t += 20_000
    return r.write(tmp_path, stem).path


def two_streams(tmp_path, stem, steps, step):
    """The same launches in the same order, every other kernel on stream 8, started beside
    the one before it on stream 7: the same work, more of it at once."""
    r, t = recorder(), 1_000_000
    for _ in range(steps):
        s7 = s8 = t
        for i, (name, dur) in enumerate(step):
            if i % 2 == 0:
                r.kernel(name, s7, dur, pid=PID, stream=7)
                s7 += dur + 1_000
            else:
                start = max(s8, s7 - dur - 1_000)
                r.kernel(name, start, dur, pid=PID, stream=8)
                s8 = start + dur + 1_000
        t = max(s7, s8) + 20_000
    return r.write(tmp_path, stem).path


def pair(a, b):
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        return diff(ta, tb)


def ids(d) -> list[str]:
    return [c.id for c in d.clues]


def clue(d, clue_id):
    (c,) = [c for c in d.clues if c.id == clue_id]
    return c


# Clues that say a kernel, the path or the per-step cost changed
CHANGE_CLUES = {
    "time_accounting",
    "step_time",
    "per_call_outlier",
    "uniform_change",
    "calls_per_step",
    "variant_swap",
    "new_kernels",
    "vanished_kernels",
    "launch_sequence_diverges",
    "same_count_different_path",
    "launch_order_changed",
    "danger_new",
    "danger_grew",
    "danger_vanished",
}


def test_a_capture_three_times_longer_is_compared_per_step(tmp_path):
    """B captured 60 steps of the program A captured 20 of: a capture difference said from
    B's side ("3.00× the launches", not "A holds 67% fewer"), no regression, and the kernel
    and category tables say their totals are each capture's."""
    d = pair(serial(tmp_path, "a", 20, TRAIN), serial(tmp_path, "b", 60, TRAIN))
    assert ids(d) == ["capture_difference"]
    c = d.clues[0]
    assert c.clue == "B holds 3.00× the launches of the same sequence"
    assert c.evidence == "device 0: 160 → 480 launches; 160 in common, in order; 20 → 60 steps"
    assert "A is B cut short" in c.verdict
    assert set(d.danger["status"]) == {"same"}
    assert d.figures["new_danger"] == 0 and d.figures["max_per_call_ratio"] == 1.0
    text = table(d, width=400)
    assert (
        "Kernels, most surprising change first (totals of each capture: 20 steps in A, 60 in "
        "B; compare the per-call columns)" in text
    )
    assert (
        "### Time by category (kernel time only: memcpy and memset are under Memory copies; "
        "totals of each capture: 20 steps in A, 60 in B; compare the per-call columns)"
        in markdown(d)
    )


def test_one_dominant_kernel_20_percent_slower_is_named(tmp_path):
    """The GEMM that carries 87% of the step's kernel time (89% in B) takes 1.20× per call, all
    else equal: under the 1.5× outlier bar, but it is the whole +60 µs per step. The board
    named no kernel (while the step line said "the lines below say ... which kernels")."""
    a = serial(tmp_path, "a", 30, DOMINATED)
    b = serial(tmp_path, "b", 30, DOMINATED, scale={BIG_GEMM: 1.2})
    d = pair(a, b)
    assert ids(d) == ["time_accounting", "step_time", "per_call_outlier"]
    assert d.clues[0].verdict == "what moved it: compute +60.00 µs"
    c = d.clues[2]
    assert (
        c.clue
        == "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64…: 1.20× longer per call"
    )
    assert c.evidence == (
        "30 calls in both; 9.00 ms → 10.80 ms total; per call 300.0 µs → 360.0 µs, while the "
        "typical kernel changed 1.00×"
    )
    assert c.verdict.startswith(
        "off the typical change on a kernel that carries 89% of the kernel time (so it moves "
        "the whole run), with the same launch grid"
    )
    assert "far off" not in c.verdict
    assert c.impact_ns == pytest.approx(60_000)
    assert c.strength == "strong" and c.rows == (BIG_GEMM,)
    assert d.clues[1].verdict.endswith(
        "the other lines of the board say which part of the GPU time and which kernels moved it"
    )
    assert "uniform_change" not in ids(d)


def test_a_small_kernel_10_percent_slower_is_not_named(tmp_path):
    """The lower bar is for kernels heavy enough to move the run: the layer norm (1% of
    the kernel time) 1.3× per call is noise-sized time, no clue."""
    a = serial(tmp_path, "a", 30, DOMINATED)
    b = serial(tmp_path, "b", 30, DOMINATED, scale={LAYERNORM: 1.3})
    assert "per_call_outlier" not in ids(pair(a, b))


def test_more_overlap_across_streams_is_overlap_not_compute(tmp_path):
    """Same kernels, same cost, half of them on a second stream beside the first: the wall
    time per step falls, the kernel time does not. The lead line said "compute -42.00 µs"
    as if the kernels got faster; it says the overlap moved it."""
    d = pair(serial(tmp_path, "a", 30, TRAIN), two_streams(tmp_path, "b", 30, TRAIN))
    assert d.figures["gpu_time_ratio"] == 1.0 and d.figures["gpu_busy_ratio"] < 0.7
    assert ids(d) == ["time_accounting", "step_time"]
    lead, step = d.clues
    assert lead.clue == "GPU wall time per step: 154.5 µs → 107.5 µs (-47.00 µs)"
    assert lead.verdict == (
        "what moved it: more overlap between compute kernels -42.00 µs, idle -5.00 µs; the "
        "compute kernels' own time did not move (124.5 µs → 124.5 µs per step): the same "
        "kernels ran more at once (on more streams, or with fewer waits between them), their "
        "cost did not change"
    )
    assert lead.evidence.startswith(
        "compute 124.5 µs → 82.50 µs (the compute kernels' own time 124.5 µs → 124.5 µs, of "
        "it overlapping 0 ns → 42.00 µs); exposed communication 0 ns → 0 ns"
    )
    assert "compute -" not in lead.verdict
    # no kernel line to point at: the step line says so, not "the lines below say ..."
    assert step.verdict == (
        "the typical step of B (warm-up left out) takes 0.65× the time of A's, and no kernel "
        "changed its calls, cost per call or variant beyond the board's bars: the GPU wall "
        "time line says which part of the GPU time moved it"
    )


def test_less_overlap_or_slower_kernels_beside_more_overlap(tmp_path):
    """The other way round (B serial, A on two streams): less overlap lengthened the step.
    And more overlap in B while its GEMMs got 1.3× slower: both parts are named, the
    kernels' own time as a part of its own, and the GEMM as a (heavy) per-call outlier."""
    d = pair(two_streams(tmp_path, "a", 30, TRAIN), serial(tmp_path, "b", 30, TRAIN))
    lead = clue(d, "time_accounting")
    assert lead.verdict.startswith(
        "what moved it: less overlap between compute kernels +42.00 µs, idle +5.00 µs; "
    )
    assert lead.verdict.endswith(
        "the same kernels ran less at once (on fewer streams, or with more waits between "
        "them), their cost did not change"
    )
    slower = [(n, int(t * 1.3) if n == XMMA_GEMM else t) for n, t in TRAIN]
    d = pair(serial(tmp_path, "a2", 30, TRAIN), two_streams(tmp_path, "b2", 30, slower))
    lead = clue(d, "time_accounting")
    assert lead.verdict == (
        "what moved it: more overlap between compute kernels -43.00 µs, compute kernels' own "
        "time +24.00 µs, idle -4.00 µs"
    )
    outlier = clue(d, "per_call_outlier")
    assert outlier.clue.endswith(": 1.30× longer per call") and outlier.rows == (XMMA_GEMM,)


def test_unrelated_programs_are_not_comparable(tmp_path):
    """A training step against a vLLM decode step (one kernel in common): not comparable,
    and no step, path or kernel clue invented from the alignment."""
    a = serial(tmp_path, "a", 30, TRAIN)
    b = serial(tmp_path, "b", 30, DECODE, r=recorder("python serve.py"))
    d = pair(a, b)
    assert ids(d) == ["not_comparable"]
    assert not d.comparable
    c = d.clues[0]
    assert c.clue == "the traces are not comparable"
    assert c.evidence.startswith("only 11% of kernel launches are of kernels both traces run")
    assert c.verdict.startswith("these look like different programs or phases")
    assert not CHANGE_CLUES & set(ids(d))


# Another program that shares the training step's generic kernels (fill, reductions,
# softmax, copy, layer norm) but not its GEMM or attention
SGEMM = "ampere_sgemm_128x64_nn"
CONV = "cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1"
MLP = [
    (SGEMM, 40_000),
    (FILL, 1_500),
    (SGEMM, 35_000),
    (REDUCE_SUM, 3_000),
    (CONV, 30_000),
    (SOFTMAX, 6_000),
    (DIRECT_COPY, 2_000),
    (LAYERNORM, 4_000),
]


def test_unrelated_programs_sharing_generic_kernels_are_flagged_as_unsure(tmp_path):
    """An unrelated program with as many launches per step and five of its eight kernels
    generic ones the training step has too scores just over the bar (0.59): the board
    read it as one program on another path without a word of doubt. It now says first
    that it is unsure."""
    a = serial(tmp_path, "a", 30, TRAIN)
    b = serial(tmp_path, "b", 30, MLP, r=recorder("python mlp.py"))
    d = pair(a, b)
    assert d.comparable and 0.5 <= d.comparability.score < 0.6
    first = d.clues[0]
    assert first.id == "low_comparability" and first.strength == "weak"
    assert first.clue == "the traces may be different programs"
    assert first.evidence == (
        "comparability 0.59 (bar 0.50, sure from 0.60): 13% kernel time in kernels both "
        "traces run; 37% launch order in common"
    )
    assert first.verdict.startswith("unsure whether these are runs of one program")
    # a pair of one program (a GEMM swapped: 0.77) is not flagged
    swapped = [(SGEMM, 60_000) if n == XMMA_GEMM else (n, t) for n, t in TRAIN]
    d = pair(a, serial(tmp_path, "c", 30, swapped))
    assert d.comparability.score >= 0.6 and "low_comparability" not in ids(d)


def test_cascade_attention_at_batch_16_names_the_merge_kernel(tmp_path):
    """KERNEL_NAMES.md's seed case: at batch 16 vLLM runs cascade attention, the attention
    kernel twice per step (shared prefix, suffixes) and an LSE merge. The danger clue names
    the merge kernel, high risk; the attention kernel's split calls are the calls clue's,
    not a per-call outlier (its mean per call mixes two kinds of call)."""
    a = serial(tmp_path, "a", 30, DECODE, r=recorder("vllm serve"))
    b = serial(tmp_path, "b", 30, CASCADE, r=recorder("vllm serve"))
    d = pair(a, b)
    danger = clue(d, "danger_new")
    assert danger.clue == (
        "vllm::merge_attn_states_kernel with a determinism risk (attention_merge, high)"
    )
    assert danger.strength == "strong"
    assert danger.evidence == "only in B: vllm::merge_attn_states_kernel (30 calls, 90.00 µs)"
    assert "cascade attention" in danger.verdict and "disable_cascade_attn=True" in danger.verdict
    calls = clue(d, "calls_per_step")
    assert calls.clue == "flash::flash_fwd_kernel: 2.00× the calls per step"
    assert "per_call_outlier" not in ids(d)
    path = clue(d, "launch_sequence_diverges")
    assert "flash::flash_fwd_kernel added (30 steps, 1 more change per step)" in path.evidence
    # "launch #4" is counted from the rotary embedding, the kernel the steps are phased on
    # (the fingerprint says #6, B's launch from the step's start): a note says so
    assert "in every step, launch #4 changed" in path.evidence
    assert d.alignment[0].step_first == ROPE
    assert (
        "the path clue's \"launch #k\" counts A's step on device 0 from its "
        "vllm::rotary_embedding_kernel launch (launch #1: the kernel the repeating steps are "
        "phased on, once per step), which need not be the step's first launch; a launch B "
        "added stands before A's launch #k"
    ) in d.notes
    # the merge kernel is in the danger table as new, and the gate counts it
    assert d.figures["new_danger"] == 1 and d.figures["danger_high_b"] == 1


def test_the_same_run_captured_at_another_time_is_no_difference(tmp_path):
    """B is A's program captured again: another session start, its kernels 7.3 s into the
    session instead of 1 ms, its correlation ids from 900,001. Nothing differs."""
    a = serial(tmp_path, "a", 30, TRAIN)
    later = recorder(session=1_780_000_000_000_000_000, first_correlation=900_001)
    b = serial(tmp_path, "b", 30, TRAIN, r=later, t=7_345_678_901)
    d = pair(a, b)
    assert d.clues == ()
    (al,) = d.alignment
    assert al.identical and al.matched_in_order == 240
    ratios = {k: v for k, v in d.figures.items() if k.endswith("_ratio") and v is not None}
    assert set(ratios.values()) == {1.0}
    text = table(d)
    assert "No difference found: no rule fired on these two traces." in text


def test_an_extra_operation_every_tenth_step_is_no_path_claim(tmp_path):
    """B is A's program with two more launches (a fill and a reduction) every tenth step,
    as an optimizer or logging step would: both repeat the same 8-launch step. The path
    clue said "the runs take different paths from that launch on" (they differ in 4 steps
    only), and the step clue compared durations of steps phased on other launches (B's
    hold the 20 µs wait between steps, A's do not: +20 µs) as a step time change. B's
    steps are now phased on A's first kernel (compare/phase.py): the same steps, no step
    time clue."""
    r, t = recorder(), 1_000_000
    for k in range(40):
        extra = [(FILL, 1_500), (REDUCE_SUM, 3_000)] if (k + 1) % 10 == 0 else []
        for name, dur in TRAIN + extra:
            r.kernel(name, t, dur, pid=PID)
            t += dur + 1_000
        t += 20_000
    d = pair(serial(tmp_path, "a", 40, TRAIN), r.write(tmp_path, "b").path)
    path = clue(d, "launch_sequence_diverges")
    assert path.verdict == (
        "the runs take different paths in some steps only: both repeat the same step, and "
        "their launches differ outside it (a path that changed partway, or steps that run "
        "something extra now and then, as an optimizer or logging step does)"
    )
    assert "step_time" not in ids(d)
    assert d.sides[0].steps.median_ns == d.sides[1].steps.median_ns == 133_500
    assert any(n.startswith("steps phased alike: B's steps start at their ") for n in d.notes)


def test_the_cli_and_report_say_it_too(tmp_path, capsys):
    """The overlap pair through the CLI: Markdown, JSON and HTML carry the same lead line."""
    a, b = serial(tmp_path, "a", 30, TRAIN), two_streams(tmp_path, "b", 30, TRAIN)
    rc, out, _ = run_cli(["diff", a, b, "--no-cache", "-f", "markdown"], capsys)
    assert rc == 0 and "| what moved it: more overlap between compute kernels -42.00 µs" in out
    rc, out, _ = run_cli(["diff", a, b, "--no-cache", "-f", "json"], capsys)
    assert rc == 0 and '"what moved it: more overlap between compute kernels' in out
    page = tmp_path / "x.html"
    rc, _, err = run_cli(["report", a, b, "-o", page, "--no-cache"], capsys)
    assert rc == 0, err
    html = re.sub(r"\s+", " ", page.read_text())
    assert "more overlap between compute kernels -42.00 µs" in html


def test_the_per_step_gate_holds_where_the_total_one_trips_on_a_longer_capture(tmp_path):
    """B captured three times the steps of the same program: its total kernel time is 3×
    A's, the same per step. ``gpu_time_ratio`` (totals) trips a 5 % gate; the per-step
    figure does not, and trips on a run 20 % slower per step."""
    from tracelens.compare.gates import check_gates

    a = serial(tmp_path, "a", 20, TRAIN)
    d = pair(a, serial(tmp_path, "b", 60, TRAIN))
    assert d.figures["gpu_time_ratio"] == pytest.approx(3.0)
    assert d.figures["gpu_time_per_step_ratio"] == pytest.approx(1.0)
    gates = ["gpu_time_ratio>1.05", "gpu_time_per_step_ratio>1.05"]
    assert [g.tripped for g in check_gates(d, gates)] == [True, False]
    slower = pair(a, serial(tmp_path, "s", 60, TRAIN, scale={XMMA_GEMM: 1.3}))
    per_call = 1 + 0.3 * 80_000 / sum(ns for _, ns in TRAIN)
    assert slower.figures["gpu_time_per_step_ratio"] == pytest.approx(per_call)
    assert [g.tripped for g in check_gates(slower, gates[1:])] == [True]


def test_the_per_step_figure_is_not_measured_without_steps(tmp_path, capsys):
    """One pass of a step is no repetition: the gate on the per-step figure exits 2 and says
    why, as every figure a result could not measure."""
    a, b = serial(tmp_path, "a", 1, TRAIN), serial(tmp_path, "b", 1, DOMINATED)
    code, _out, err = run_cli(
        ["diff", a, b, "--fail-if", "gpu_time_per_step_ratio>1.05", "--no-cache"], capsys
    )
    assert code == 2
    assert err.strip().endswith(
        "gpu_time_per_step_ratio was not measured: a capture repeats no step "
        "(gpu_time_ratio compares the totals)"
    )


def test_the_report_says_its_totals_are_each_captures(tmp_path):
    """The page's Totals, Categories and Kernels headings say what the text board's kernel
    and category titles say when the captures hold different numbers of steps; a pair of
    equal captures says nothing of it."""
    from tracelens.report import build_report

    caveat = "totals of each capture: 20 steps in A, 60 in B; compare the per-call columns"
    a = serial(tmp_path, "a", 20, TRAIN)
    for b, expected in (
        (serial(tmp_path, "b", 60, TRAIN), 3),
        (serial(tmp_path, "c", 20, TRAIN), 0),
    ):
        with tracelens.open(a) as ta, tracelens.open(b) as tb:
            html = build_report(ta, tb)
        assert html.count(caveat) == expected
