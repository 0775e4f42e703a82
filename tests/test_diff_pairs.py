"""tracelens diff on pairs it was not shaped on, built with the fixture builder: a capture
cut short, a kernel called twice per step, all kernels slower alike vs one dominant kernel
slower, unrelated programs, categories by demangled name, and the alignment's cost on long
sequences (by ratio, not wall time)."""

from __future__ import annotations

import time

import pytest
from fixtures.builder import DIRECT_COPY, FILL, FLASH_FWD, NCCL_SENDRECV, REDUCE_SUM, XMMA_GEMM
from fixtures.builder import _Recorder as Recorder

import tracelens
from tracelens.compare import diff
from tracelens.compare.align import align_tokens

PID = 4242
GEMM_B = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
LAYERNORM = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)"
SOFTMAX = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<(int)4, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(T4 *, const T2 *, int)"

# One training-like step: (kernel name, ns per call); FLASH_FWD is the attention kernel.
STEP = [
    (LAYERNORM, 4_000),
    (XMMA_GEMM, 40_000),
    (FLASH_FWD, 30_000),
    (XMMA_GEMM, 40_000),
    (SOFTMAX, 6_000),
    (FILL, 1_500),
    (REDUCE_SUM, 3_000),
    (DIRECT_COPY, 2_000),
]


def build_steps(
    tmp_path, stem, steps, step=STEP, *, scale=None, gpu="NVIDIA H100 80GB HBM3", gap=20_000
):
    """``steps`` repetitions of ``step`` back to back on device 0, ``gap`` ns of idle GPU
    between them; ``scale`` maps a kernel name to a per-call factor (the others unchanged)."""
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    r.gpu(0, gpu)
    t = 1_000_000
    for _ in range(steps):
        for name, dur in step:
            d = int(dur * (scale or {}).get(name, 1.0))
            r.kernel(name, t, d, pid=PID)
            t += d + 1_000
        t += gap  # the host's gap between steps
    return r.write(tmp_path, stem).path


def build_stepless(tmp_path, stem, launches, *, seed=7):
    """``launches`` kernels of ``STEP`` drawn at random (``seed``) back to back on device 0:
    no repeating step, so a diff judges by the captures' totals."""
    import random

    rng, r = random.Random(seed), Recorder("3.25.0")
    r.process(PID, "python serve.py")
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    t = 1_000_000
    for _ in range(launches):
        name, dur = rng.choice(STEP)
        r.kernel(name, t, dur, pid=PID)
        t += dur + 1_000
    return r.write(tmp_path, stem).path


def pair(tmp_path, a, b):
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        return diff(ta, tb)


PATH_CLUES = {"launch_sequence_diverges", "same_count_different_path", "launch_order_changed"}


def ids(d):
    return [c.id for c in d.clues]


def test_a_capture_cut_short_is_a_capture_clue_not_a_path_change(tmp_path):
    d = pair(tmp_path, build_steps(tmp_path, "a", 40), build_steps(tmp_path, "b", 30))
    (al,) = d.alignment
    assert al.relation == "prefix" and al.capture_difference
    assert "capture_difference" in ids(d)
    assert not {*PATH_CLUES, "weak_evidence"} & set(ids(d))
    (c,) = [c for c in d.clues if c.id == "capture_difference"]
    assert c.clue == "B holds 25% fewer launches of the same sequence"
    assert "B is A cut short" in c.verdict
    assert not any(c.id in ("per_call_outlier", "uniform_change") for c in d.clues)


def test_a_shifted_capture_of_the_same_steps_is_a_capture_clue(tmp_path):
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    a = build_steps(tmp_path, "a", 30)
    # B starts in the middle of a step and ends in the middle of another
    t = 1_000_000
    launches = (STEP * 25)[3:-2]
    for name, dur in launches:
        r.kernel(name, t, dur, pid=PID)
        t += dur + 1_000
    b = r.write(tmp_path, "b").path
    d = pair(tmp_path, a, b)
    assert d.alignment[0].relation == "slice"
    assert "capture_difference" in ids(d) and "launch_sequence_diverges" not in ids(d)


def test_a_kernel_called_twice_per_step_is_a_clue(tmp_path):
    doubled = STEP[:3] + [(FLASH_FWD, 30_000)] + STEP[3:]
    d = pair(tmp_path, build_steps(tmp_path, "a", 30), build_steps(tmp_path, "b", 30, step=doubled))
    (c,) = [c for c in d.clues if c.id == "calls_per_step"]
    assert c.clue.startswith("flash::flash_fwd_kernel") and "2.00× the calls per step" in c.clue
    assert c.evidence.startswith("1 → 2 calls in every step (30 steps in B)")
    assert c.impact_ns == pytest.approx(30_000, rel=0.01)  # one more 30 µs call per step
    path = [c for c in d.clues if c.id == "launch_sequence_diverges"]
    assert path and "in every step, launch #" in path[0].evidence
    assert "uniform_change" not in ids(d)


def test_a_swapped_kernel_is_the_variant_clues_time_not_the_path_clues_too(tmp_path):
    """B runs another GEMM in the same places (60 µs instead of 40 µs per call): the path
    clue, the variant clue and the danger clue (both GEMMs: cublas_heuristic_legacy) see
    the same launches; the danger clue counts their time (each kernel's time in one clue),
    the variant clue keeps its line without it and says so, the path clue says so and
    counts nothing twice."""
    swapped = [(GEMM_B, 60_000) if n == XMMA_GEMM else (n, t) for n, t in STEP]
    d = pair(tmp_path, build_steps(tmp_path, "a", 20), build_steps(tmp_path, "b", 20, swapped))
    (variant,) = [c for c in d.clues if c.id == "variant_swap"]
    (danger,) = [c for c in d.clues if c.id == "danger_swapped"]
    (path,) = [c for c in d.clues if c.id == "same_count_different_path"]
    assert danger.impact_ns == pytest.approx(2 * 20_000)  # two GEMMs per step, +20 µs each
    assert variant.impact_ns is None and variant.rows == ("gemm",)
    assert variant.evidence.endswith(
        "all with a determinism risk, 1 in B (2.40 ms) and 1 in A (1.60 ms): the "
        "determinism-risk line counts their time"
    )
    assert path.impact_ns is None
    assert path.evidence.endswith(
        "+40.00 µs/step of the time these launches moved is counted by the determinism-risk clues"
    )
    assert path.rows == ("0",)


def test_an_extra_call_per_step_is_counted_once(tmp_path):
    """One more attention call per step: the calls-per-step clue counts its time; the
    path clue names the change and leaves the time to it."""
    doubled = STEP[:3] + [(FLASH_FWD, 30_000)] + STEP[3:]
    d = pair(tmp_path, build_steps(tmp_path, "a", 30), build_steps(tmp_path, "b", 30, step=doubled))
    (calls,) = [c for c in d.clues if c.id == "calls_per_step"]
    (path,) = [c for c in d.clues if c.id == "launch_sequence_diverges"]
    assert calls.impact_ns == pytest.approx(30_000, rel=0.01)
    assert path.impact_ns is None
    assert "of the time these launches moved is counted by the calls-per-step clue" in path.evidence


def test_a_reordered_step_keeps_the_path_clues_time(tmp_path):
    """Kernels both runs have, in another order: no other clue explains the change, the
    path clue keeps its impact."""
    reordered = [STEP[1], STEP[0], *STEP[2:]]
    d = pair(tmp_path, build_steps(tmp_path, "a", 30), build_steps(tmp_path, "b", 30, reordered))
    path = [c for c in d.clues if c.id == "launch_order_changed"]
    assert path and "counted by" not in path[0].evidence


def test_all_kernels_slower_alike_is_uniform(tmp_path):
    scale = {name: 1.3 for name, _ in STEP}
    d = pair(tmp_path, build_steps(tmp_path, "a", 20), build_steps(tmp_path, "b", 20, scale=scale))
    # the lead line (wall time per step, from util), the steady step, the uniform change
    assert ids(d) == ["time_accounting", "step_time", "uniform_change"]
    step = d.clues[1]
    assert step.clue.startswith("steady-state step: median ") and "1.28×)" in step.clue
    assert (
        step.evidence.startswith("A: 20 steps, median ")
        and "; B: 20 steps, median " in step.evidence
    )
    assert "compute +" in d.clues[0].verdict
    assert d.clues[2].clue == "the typical kernel is 1.30× longer per call"
    assert d.typical.q25 == pytest.approx(1.3, abs=0.01) and d.typical.q75 == pytest.approx(
        1.3, abs=0.01
    )


def test_one_dominant_kernel_slower_is_not_uniform(tmp_path):
    # The GEMM carries most of the time and the most launches; it alone slows 3x.
    d = pair(
        tmp_path,
        build_steps(tmp_path, "a", 20),
        build_steps(tmp_path, "b", 20, scale={XMMA_GEMM: 3.0}),
    )
    assert "uniform_change" not in ids(d)
    assert d.typical.ratio == pytest.approx(1.0, abs=0.01)
    (c,) = [c for c in d.clues if c.id == "per_call_outlier"]
    assert "3.00× longer per call" in c.clue and "xmma_gemm" in c.clue
    assert c.impact_ns == pytest.approx(2 * 2 * 40_000, rel=0.01)  # per step: 2 calls, +80 µs


def test_the_notes_say_how_many_steps_each_capture_holds(tmp_path):
    d = pair(tmp_path, build_steps(tmp_path, "a", 40), build_steps(tmp_path, "b", 30))
    (note,) = [n for n in d.notes if n.startswith("steps: ")]
    assert note.startswith("steps: A 40 steps, B 30 steps, from the period of the kernel launch")
    # one step repeats nothing: B has no steps, and the note says what that means
    d = pair(tmp_path, build_steps(tmp_path, "a", 40), build_steps(tmp_path, "one", 1))
    (note,) = [n for n in d.notes if n.startswith("steps: ")]
    assert note.startswith("steps: A 40 steps, B none found, from ")
    assert note.endswith("(figures per launch where a side has none)")
    assert "step_time" not in ids(d)
    # steps of other motifs: each side says what its steps were found from
    d = pair(tmp_path, build_steps(tmp_path, "a", 40), build_steps(tmp_path, "s", 30, STEP[:6]))
    (note,) = [n for n in d.notes if n.startswith("steps: ")]
    assert note.startswith("steps: A 40 steps, from the period of the kernel launch sequence")
    assert "a motif of 8 kernels" in note and "; B 30 steps, from " in note
    assert "a motif of 6 kernels" in note


def test_a_longer_host_gap_between_steps_is_idle_time_not_a_kernel_change(tmp_path):
    """Same kernels, same time per call; B's host leaves the GPU idle 200 µs instead of
    20 µs between steps: the lead line says idle moved the step, no kernel clue."""
    d = pair(tmp_path, build_steps(tmp_path, "a", 20), build_steps(tmp_path, "b", 20, gap=200_000))
    (lead,) = [c for c in d.clues if c.id == "time_accounting"]
    assert lead.clue.startswith("GPU wall time per step: ")
    # each step's gap to the next 180 µs longer: +180 µs per step (it said +171 µs, 19
    # gaps over 20 steps: the span from the first GPU operation to the last holds 19)
    assert lead.verdict == "what moved it: idle +180.0 µs"
    assert "compute" not in lead.verdict
    assert not {"per_call_outlier", "uniform_change", "calls_per_step"} & set(ids(d))


def test_without_steps_calls_are_compared_per_launch_and_the_board_says_so(tmp_path):
    """Two captures with no repeating step, the attention kernel 10% of the launches in A
    and 20% in B: a calls clue normalized by launches, which says it is."""
    import random

    def build(stem, share, seed):
        rng = random.Random(seed)
        r = Recorder("3.25.0")
        r.process(PID, "python serve.py")
        r.gpu(0, "NVIDIA H100 80GB HBM3")
        others = [(name, dur) for name, dur in STEP if name != FLASH_FWD]
        t = 1_000_000
        for _ in range(400):
            name, dur = (FLASH_FWD, 30_000) if rng.random() < share else rng.choice(others)
            r.kernel(name, t, dur, pid=PID)
            t += dur + 1_000
        return r.write(tmp_path, stem).path

    d = pair(tmp_path, build("a", 0.1, 1), build("b", 0.2, 2))
    assert d.steps_a is None and d.steps_b is None
    (c,) = [c for c in d.clues if c.id == "calls_per_step" and "flash" in c.clue]
    assert "the calls per launch" in c.clue
    assert "(no steps found, so normalized by launches)" in c.evidence


def test_communication_outliers_have_a_lower_bar(tmp_path):
    step = STEP + [(NCCL_SENDRECV, 50_000)]
    d = pair(
        tmp_path,
        build_steps(tmp_path, "a", 20, step=step),
        build_steps(tmp_path, "b", 20, step=step, scale={NCCL_SENDRECV: 1.4}),
    )
    (c,) = [c for c in d.clues if c.id == "per_call_outlier"]
    assert c.clue.startswith("ncclDevKernel_SendRecv") and "1.40× longer" in c.clue


def test_unrelated_programs_are_not_comparable(tmp_path):
    # Both launch the same small fill kernel often; everything that takes time differs.
    other = [
        ("void cufft::radix4_kernel<float2>(float2 *)", 50_000),
        (FILL, 1_500),
        ("void thrust::cuda_cub::core::_kernel_agent<sort_by_key>(int *)", 35_000),
        (FILL, 1_500),
        (FILL, 1_500),
    ]
    mine = [(XMMA_GEMM, 40_000), (FILL, 1_500), (FLASH_FWD, 30_000), (FILL, 1_500), (FILL, 1_500)]
    d = pair(
        tmp_path,
        build_steps(tmp_path, "a", 30, step=mine),
        build_steps(tmp_path, "b", 30, step=other, gpu="NVIDIA A100-SXM4-80GB"),
    )
    assert not d.comparable
    assert ids(d) == ["not_comparable"]
    assert d.comparability.factors["shared_launches"] == pytest.approx(0.6)
    assert d.comparability.score < d.comparability.bar
    assert "kernel time in kernels both traces run" in d.clues[0].evidence


def test_identical_step_traces_have_no_clue(tmp_path):
    d = pair(tmp_path, build_steps(tmp_path, "a", 12), build_steps(tmp_path, "b", 12))
    assert d.clues == () and d.comparable and d.alignment[0].identical


def test_categories_follow_demangled_names_whatever_name_shows(tmp_path):
    a, b = build_steps(tmp_path, "a", 10), build_steps(tmp_path, "b", 10, scale={FILL: 2.0})
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        demangled = diff(ta, tb).categories.sort("category")
        short = diff(ta, tb, name="short").categories.sort("category")
    assert demangled.equals(short)


def _periodic(n, motif_len=400, vocabulary=300, seed=1):
    import random

    rng = random.Random(seed)
    motif = [rng.randrange(vocabulary) for _ in range(motif_len)]
    motif[0] = vocabulary  # once per step: the anchor
    return (motif * (n // motif_len + 1))[:n], [str(i) for i in range(vocabulary + 1)]


def _seconds(fn, *args):
    """The best CPU time of two runs (process_time: a loaded machine inflates wall time;
    a scaling ratio of wall times failed under load 70)."""
    best = None
    for _ in range(2):
        t = time.process_time()
        fn(*args)
        elapsed = time.process_time() - t
        best = elapsed if best is None else min(best, elapsed)
    return best


@pytest.mark.parametrize("change", ["cut_short", "insert_per_step"])
def test_alignment_is_near_linear_on_a_million_launches(change):
    """10x the launches costs at most ~15x the time (quadratic would be 100x), and a
    million launches are aligned whole (no cap)."""

    def case(n):
        a, names = _periodic(n)
        if change == "cut_short":
            b = a[: n - n // 10]
        else:
            motif = a[:400]
            b = (motif[:50] + [7] + motif[50:]) * (n // 401)
        return a, b, names

    small, large = case(100_000), case(1_000_000)
    t_small = _seconds(align_tokens, 0, *small[:2], small[2])
    t_large = _seconds(align_tokens, 0, *large[:2], large[2])
    al = align_tokens(0, *large[:2], large[2])
    assert al.launches_a == 1_000_000 and al.relation in ("prefix", "periodic")
    assert t_large <= 15 * t_small + 0.5


def test_aperiodic_different_sequences_degrade_to_the_bound():
    import random

    rng = random.Random(3)

    def case(n):
        return [rng.randrange(3) for _ in range(n)], [rng.randrange(3) for _ in range(n)]

    small, large = case(100_000), case(1_000_000)
    names = ["x", "y", "z"]
    t_small = _seconds(align_tokens, 0, *small, names)
    t_large = _seconds(align_tokens, 0, *large, names)
    al = align_tokens(0, *large, names)
    assert al.relation == "windows" and al.truncated
    # the exact part is capped, the rest is linear: 10x the input, not 100x the time
    assert t_large <= 15 * t_small + 0.5


def build_overlap(tmp_path, stem, steps, *, overlapped):
    """Per step two GEMMs on the compute stream and one NCCL collective on its own stream:
    beside the second GEMM (``overlapped``) or after it. Same calls, same time per call."""
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    t = 1_000_000
    for _ in range(steps):
        r.kernel(XMMA_GEMM, t, 40_000, pid=PID, stream=7)
        second = t + 41_000
        r.kernel(XMMA_GEMM, second, 40_000, pid=PID, stream=7)
        nccl = second if overlapped else second + 41_000
        r.kernel(NCCL_SENDRECV, nccl, 30_000, pid=PID, stream=20)
        t = nccl + 31_000 + 20_000 if not overlapped else second + 41_000 + 20_000
    return r.write(tmp_path, stem).path


def test_communication_that_stops_overlapping_is_an_exposed_communication_clue(tmp_path):
    d = pair(
        tmp_path,
        build_overlap(tmp_path, "a", 20, overlapped=True),
        build_overlap(tmp_path, "b", 20, overlapped=False),
    )
    assert d.steps_b == 20
    (c,) = [c for c in d.clues if c.id == "exposed_communication"]
    assert c.clue == "communication no longer hidden by compute: exposed 0 ns → 30.00 µs per step"
    assert c.impact_ns == pytest.approx(30_000)
    # kernels unchanged per call: no per-call or uniform clue
    assert not {"per_call_outlier", "uniform_change", "calls_per_step"} & set(ids(d))
    (lead,) = [c for c in d.clues if c.id == "time_accounting"]
    assert lead.clue.startswith("GPU wall time per step: ") and "+31.00 µs" in lead.clue
    assert "exposed communication +30.00 µs" in lead.verdict
    assert ids(d).index("time_accounting") < ids(d).index("exposed_communication")


def test_the_board_says_how_many_nvtx_ranges_selected_each_side(tmp_path):
    a, b = build_steps(tmp_path, "a", 5), build_steps(tmp_path, "b", 5)
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        d = diff(ta, tb, nvtx_ranges=(1, 67))
    assert (
        "only the GPU work launched inside the matching NVTX ranges: 1 range matched in A, "
        "67 ranges matched in B"
    ) in d.notes
    assert d.to_dict()["nvtx_ranges"] == [1, 67]


# -- NVTX region deltas -----------------------------------------------------------------------
def build_nvtx_steps(tmp_path, stem, steps, *, attn_ns=30_000):
    """``steps`` steps, each an NVTX range 'step' holding an 'attn' range around the
    attention kernel's launch and an 'mlp' range around each GEMM's."""
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    t = 1_000_000
    for _ in range(steps):
        s0 = t - 10_000
        for name, dur in STEP:
            d = attn_ns if name == FLASH_FWD else dur
            r.kernel(name, t, d, pid=PID)  # launched by an API call at [t - 7 µs, t - 3 µs]
            region = {FLASH_FWD: "attn", XMMA_GEMM: "mlp"}.get(name)
            if region:
                r.nvtx(region, t - 8_000, t - 2_000, pid=PID)
            t += d + 1_000
        r.nvtx("step", s0, t, pid=PID)
        t += 20_000
    return r.write(tmp_path, stem).path


def test_nvtx_region_deltas_per_step(tmp_path):
    """The attention kernel takes 60 µs instead of 30 µs: the 'step / attn' region grew
    30 µs per step, in every step; 'step / mlp' did not move."""
    d = pair(
        tmp_path,
        build_nvtx_steps(tmp_path, "a", 12),
        build_nvtx_steps(tmp_path, "b", 12, attn_ns=60_000),
    )
    regions = {r["path"]: r for r in d.nvtx_regions.iter_rows(named=True)}
    assert set(regions) == {"step", "step / attn", "step / mlp"}
    attn, mlp = regions["step / attn"], regions["step / mlp"]
    assert (attn["a_ops"], attn["b_ops"]) == (12, 12)
    assert (attn["a_step_ns"], attn["b_step_ns"], attn["delta_ns"]) == (30_000, 60_000, 30_000)
    assert attn["ratio"] == 2.0
    assert (mlp["a_step_ns"], mlp["delta_ns"]) == (80_000, 0)
    assert d.nvtx_regions["path"][0] == "step / attn"  # the largest change first
    per_step = d.nvtx_steps.filter(d.nvtx_steps["path"] == "step / attn")
    assert per_step.height == 12 and set(per_step["delta_ns"]) == {30_000}
    data = d.to_dict()
    assert data["nvtx_regions"][0]["path"] == "step / attn"
    assert len(data["nvtx_steps"]) == d.nvtx_steps.height


def build_double_steps(tmp_path, stem, steps, *, attn_ns=30_000):
    """``steps`` NVTX ranges 'step', each holding the launch motif STEP twice: the steps
    `tracelens steps` finds (the ranges) are half the motif's repetitions."""
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    r.gpu(0, "NVIDIA H100 80GB HBM3")
    t = 1_000_000
    for _ in range(steps):
        s0 = t - 10_000
        for _half in range(2):
            for name, dur in STEP:
                d = attn_ns if name == FLASH_FWD else dur
                r.kernel(name, t, d, pid=PID)
                t += d + 1_000
        r.nvtx("step", s0, t, pid=PID)
        t += 20_000
    return r.write(tmp_path, stem).path


def test_per_step_impacts_count_the_steps_tracelens_steps_finds(tmp_path):
    """10 NVTX steps of two motif repetitions each; the attention kernel takes 90 µs
    instead of 30 µs (2 calls per step): the impacts are per NVTX step (+120 µs, not the
    +60 µs per repetition), as `tracelens steps` counts them, and the board says so."""
    a, b = (
        build_double_steps(tmp_path, "a", 10),
        build_double_steps(tmp_path, "b", 10, attn_ns=90_000),
    )
    d = pair(tmp_path, a, b)
    for path in (a, b):
        with tracelens.open(path) as t:
            assert t.steps().count == 10
    (al,) = d.alignment
    assert (al.steps_a, al.steps_b) == (20, 20)  # the motif repeats twice per step
    assert (d.steps_a, d.steps_b) == (10, 10)
    (outlier,) = [c for c in d.clues if c.id == "per_call_outlier"]
    assert "flash" in outlier.clue and outlier.impact_ns == pytest.approx(120_000, rel=0.01)
    (steps,) = [n for n in d.notes if n.startswith("steps: ")]
    assert steps.startswith("steps: A 10 steps, B 10 steps, from 10 top-level NVTX ranges")
    assert (
        "per-step clue impacts count the steps above; the launch sequence on the busiest "
        "device repeats A 20, B 20 times (calls per step count per repetition)"
    ) in d.notes
    (lead,) = [c for c in d.clues if c.id == "time_accounting"]
    assert lead.clue.startswith("GPU wall time per step: ")


def test_nvtx_region_deltas_follow_the_nvtx_selection(tmp_path):
    from tracelens.filters import select_nvtx

    a = build_nvtx_steps(tmp_path, "a", 6)
    b = build_nvtx_steps(tmp_path, "b", 6, attn_ns=60_000)
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        wa, _ = select_nvtx(ta, "attn")
        wb, _ = select_nvtx(tb, "attn")
        d = diff(ta, tb, where_a=wa, where_b=wb)
    assert d.nvtx_regions["path"].to_list() == ["step / attn"]


def test_no_nvtx_regions_without_ranges(tmp_path):
    d = pair(tmp_path, build_steps(tmp_path, "a", 10), build_steps(tmp_path, "b", 10))
    assert d.nvtx_regions is None and d.nvtx_steps is None
    assert d.to_dict()["nvtx_regions"] is None


def test_nvtx_region_deltas_left_out_above_the_limit(tmp_path, monkeypatch):
    """Above threshold.nvtx_max_launches launches the diff leaves the NVTX regions out and
    names the command that shows them."""
    from tracelens.compare import clues

    real = clues.threshold
    monkeypatch.setattr(clues, "threshold", lambda n: 95 if n == "nvtx_max_launches" else real(n))
    a = build_nvtx_steps(tmp_path, "a", 12)  # 96 launches
    b = build_nvtx_steps(tmp_path, "b", 11)  # 88
    d = pair(tmp_path, a, b)
    assert d.nvtx_regions is None
    assert (
        "NVTX region deltas left out above 95 launches per trace (A), for speed: run "
        "`tracelens nvtx --gpu --group path` on each"
    ) in d.notes
    assert real("nvtx_max_launches") == 1_000_000


# -- devices paired by what they run ------------------------------------------------------
# Three devices with different work each: a GEMM stream, attention, communication and copies.
DEVICE_WORK = [
    [(XMMA_GEMM, 40_000), (GEMM_B, 35_000), (LAYERNORM, 4_000)],
    [(FLASH_FWD, 30_000), (SOFTMAX, 6_000), (FILL, 1_500), (SOFTMAX, 6_000)],
    [(NCCL_SENDRECV, 50_000), (DIRECT_COPY, 2_000), (REDUCE_SUM, 3_000)],
]


def build_devices(tmp_path, stem, work_of_device, steps=30):
    """``work_of_device``: device ordinal -> its step (kernel name, ns per call), repeated
    ``steps`` times (or ``steps[device]``) on that device, the devices side by side in
    time."""
    r = Recorder("3.25.0")
    r.process(PID, "python train.py")
    for device in sorted(work_of_device):
        r.gpu(device, "NVIDIA H100 80GB HBM3")
    for device, step in sorted(work_of_device.items()):
        t = 1_000_000
        for _ in range(steps[device] if isinstance(steps, dict) else steps):
            for name, dur in step:
                r.kernel(name, t, dur, pid=PID, device=device)
                t += dur + 1_000
            t += 20_000
    return r.write(tmp_path, stem).path


def test_renumbered_devices_are_paired_by_what_they_run(tmp_path):
    """B runs A's work with its devices renumbered (A's 0, 1, 2 are B's 2, 0, 1): each
    device is compared with the one that runs the same kernels, the sequences are
    identical, no path clue, and the board says which device was compared with which."""
    a = build_devices(tmp_path, "a", dict(enumerate(DEVICE_WORK)))
    b = build_devices(tmp_path, "b", {2: DEVICE_WORK[0], 0: DEVICE_WORK[1], 1: DEVICE_WORK[2]})
    d = pair(tmp_path, a, b)
    assert [(al.device, al.device_b) for al in d.alignment] == [(0, 2), (1, 0), (2, 1)]
    assert all(al.relation == "identical" for al in d.alignment)
    assert not PATH_CLUES & set(ids(d))
    assert (
        "devices compared by the kernels they launch, not by number: device 0 of A with "
        "device 2 of B, 1 with 0, 2 with 1 (compare/align.py, pair_devices)"
    ) in d.notes


def test_a_device_only_b_launched_on_says_so_when_devices_are_renumbered(tmp_path):
    """A's devices 0 and 1 run in B as its 1 and 2; B's device 0 runs work A has no device
    for. "device 0" alone would read as A's device 0 (compared with B's 1): the board and
    the launch-order table say it is B's."""
    from tracelens.compare import render

    a = build_devices(tmp_path, "a", {0: DEVICE_WORK[0], 1: DEVICE_WORK[1]})
    b = build_devices(tmp_path, "b", {1: DEVICE_WORK[0], 2: DEVICE_WORK[1], 0: DEVICE_WORK[2]})
    d = pair(tmp_path, a, b)
    rows = [(al.device, al.device_b, al.only, al.where) for al in d.alignment]
    assert rows == [
        (0, None, "B", "device 0 (B)"),
        (0, 1, None, "device 0 (A) / 1 (B)"),
        (1, 2, None, "device 1 (A) / 2 (B)"),
    ]
    only_b = d.alignment[0]
    assert (only_b.launches_a, only_b.launches_b) == (0, 30 * len(DEVICE_WORK[2]))
    assert "0 (B)" in render.table(d, top=5, width=200)
    assert d.to_polars("alignment")["only"].to_list() == ["B", None, None]
    # by number, a device one run alone launched on is just its number
    c = build_devices(tmp_path, "c", {0: DEVICE_WORK[0], 1: DEVICE_WORK[1], 2: DEVICE_WORK[2]})
    d = pair(tmp_path, a, c)
    assert [(al.device, al.device_b, al.where) for al in d.alignment][2] == (2, None, "device 2")


def test_devices_with_the_same_numbering_stay_paired_by_ordinal(tmp_path):
    """The identity pairing: A and B number their devices alike (B a few steps longer on
    one device), and four data-parallel devices that run the same kernels are not
    reordered by small differences in their launch counts (pairing A's device 1 with B's 0
    would match 3 steps more of 123: under pair_devices' bar)."""
    a = build_devices(tmp_path, "a", dict(enumerate(DEVICE_WORK)))
    b = build_devices(tmp_path, "b", dict(enumerate(DEVICE_WORK)), steps={0: 30, 1: 34, 2: 30})
    d = pair(tmp_path, a, b)
    assert [(al.device, al.device_b) for al in d.alignment] == [(0, None), (1, None), (2, None)]
    assert [al.relation for al in d.alignment] == ["identical", "prefix", "identical"]
    assert not any("not by number" in n for n in d.notes)
    same = dict.fromkeys(range(4), DEVICE_WORK[0] + DEVICE_WORK[1])
    dp_a = build_devices(tmp_path, "dp_a", same, steps={0: 30, 1: 33, 2: 30, 3: 30})
    dp_b = build_devices(tmp_path, "dp_b", same, steps={0: 33, 1: 30, 2: 30, 3: 30})
    d = pair(tmp_path, dp_a, dp_b)
    assert [(al.device, al.device_b) for al in d.alignment] == [(i, None) for i in range(4)]


# -- CUDA graph replays traced at graph level ---------------------------------------------
def build_graph_loop(tmp_path, stem, steps=12, replay_ns=8_000_000):
    """A decode loop of two kernels and one replay of graph 3 (even steps) or 5 (odd ones)
    per step, the replays ~1,000x longer than the kernels."""
    from fixtures.builder import add_graph_replays

    from tracelens.synth import TraceBuilder, global_pid

    b = TraceBuilder("3.0.0")
    b.process(PID, "python -m vllm.entrypoints.openai.api_server")
    b.gpu(0, "NVIDIA H100 80GB HBM3", sm_count=132)
    replays = []
    for i in range(steps):
        t = 1_000_000 + i * 10_000_000
        for j, name in enumerate((SOFTMAX, FILL)):
            b.kernel(name, start=t + j * 10_000, end=t + j * 10_000 + 5_000, stream=7)
        start, graph = t + 30_000, 3 if i % 2 == 0 else 5
        replays.append(
            (start, start + replay_ns, 0, 1, None, 7, 20_000 + i, global_pid(PID), graph, graph)
        )
    path = tmp_path / f"{stem}.sqlite"
    b.write(path)
    add_graph_replays(path, replays)
    return path


def test_graph_replays_are_steps_from_the_one_read_of_the_work(tmp_path, monkeypatch):
    """On a trace whose steps are mostly CUDA graph replays traced at graph level, the diff
    finds the steps trace.steps() finds (replays as launches, by graph) from the GPU work
    it has read once, without reading the launches again (steps_launches, or the narrow
    steps_launch_rows that the step search reads when it reads them itself)."""
    from tracelens.trace import Trace

    a, b = build_graph_loop(tmp_path, "a"), build_graph_loop(tmp_path, "b", replay_ns=9_000_000)
    queries: list[str] = []
    query = Trace.query

    def recorded(trace, name, **params):
        queries.append(name)
        return query(trace, name, **params)

    monkeypatch.setattr(Trace, "query", recorded)
    d = pair(tmp_path, a, b)
    assert queries.count("work_in_order") == 2  # once per trace, nothing else reads the kernels
    assert "kernel_summary" not in queries
    assert "steps_launches" not in queries and "steps_launch_rows" not in queries
    monkeypatch.setattr(Trace, "query", query)
    for path, side in ((a, d.sides[0]), (b, d.sides[1])):
        with tracelens.open(path) as t:
            expected = t.steps()
        assert side.steps.method == expected.method == "period"
        assert side.steps.detail == expected.detail
        assert side.steps.frame.equals(expected.frame)
