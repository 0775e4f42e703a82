"""tracelens.fingerprint: the numerical path of a run, and the comparison of two paths."""

from __future__ import annotations

import importlib
import json

import jsonschema
import pytest
from conftest import run_cli
from fixtures.fingerprint_runs import GEMM_SPLITK, Run, build_run

import tracelens
from tracelens import fingerprint as fp
from tracelens.demo import demo_path

# The module (tracelens.fingerprint.build is also the name of the function it exports).
build_module = importlib.import_module("tracelens.fingerprint.build")


def _doc(path):
    with tracelens.open(path) as trace:
        return tracelens.fingerprint(trace)


def _text(path) -> str:
    return fp.dumps(_doc(path))


@pytest.fixture(scope="module")
def demo_docs():
    return _doc(demo_path("bs1")), _doc(demo_path("bs16"))


def _no_steps(trace, *_launches):
    """A capture without structure: what fingerprint sees when trace.steps() finds none."""
    return {"method": "none", "count": 0}, [], None


def _schema():
    return json.loads(fp.SCHEMA_PATH.read_text())


# -- stability: what is not numerical does not change the fingerprint ----------------------
def test_same_trace_gives_the_same_bytes(tmp_path):
    path = build_run(tmp_path / "a.sqlite")
    assert _text(path) == _text(path)


def test_jitter_capture_start_pid_and_addresses_do_not_change_it(tmp_path):
    base = _text(build_run(tmp_path / "base.sqlite"))
    other = Run(
        jitter_seed=7,
        origin_ns=9_876_543_210,
        pid=31337,
        session_start_utc_ns=1_800_000_000_000_000_000,
        address=0x7FFF12340000,
    )
    assert _text(build_run(tmp_path / "other.sqlite", other)) == base
    assert "0x…" in base and "7f3a2c" not in base  # the pointer argument was normalized


def test_documents_follow_the_shipped_schema(tmp_path, demo_docs):
    schema = _schema()
    for doc in (*demo_docs, _doc(build_run(tmp_path / "r.sqlite", Run(nvtx=False)))):
        jsonschema.validate(json.loads(fp.dumps(doc)), schema)


def test_schema_rejects_a_document_missing_its_paths(demo_docs):
    broken = {k: v for k, v in demo_docs[0].items() if k != "paths"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, _schema())


# -- regions: NVTX paths, or whole steps without NVTX ------------------------------------
def test_nvtx_regions_and_identical_regions_share_their_variants(tmp_path):
    doc = _doc(build_run(tmp_path / "r.sqlite"))
    assert doc["regions"] == "nvtx" and doc["steps"] == {"method": "marker", "count": 3}
    regions = [(tuple(e["region"]), e["steps"]) for e in doc["paths"]]
    assert regions == [((), [1, 2, 3]), (("layers.0",), [1, 2, 3]), (("layers.1",), [1, 2, 3])]
    layer = next(e for e in doc["paths"] if e["region"] == ["layers.0"])
    names = [doc["variants"][i]["name"] for i in layer["sequence"]]
    assert [n.split("<")[0] for n in names] == [
        "vllm::rms_norm_kernel",
        "nvjet_tst_128x96_64x7_4x1_v_bz_bias_TNT",
        "flash::flash_fwd_splitkv_kernel",
    ]
    gemm = doc["variants"][layer["sequence"][1]]
    assert gemm["grid"] == [132, 1, 1] and gemm["fields"]["tile_mn"] == "128x96"
    assert gemm["fields"]["stages"] == "7" and "cublas_heuristic_nvjet" in gemm["danger"]
    assert "raster_order" not in gemm["fields"]  # scheduling, not math


def test_steps_with_the_same_path_collapse_into_one_entry(tmp_path):
    """With six step_N ranges trace.steps() finds steps: each layer is one region across
    them, and a change in steps 4 and 5 is one changed region listing those steps."""
    doc = _doc(build_run(tmp_path / "a.sqlite", Run(steps=6)))
    assert doc["steps"]["count"] == 6
    assert [(e["region"], e["steps"]) for e in doc["paths"]] == [
        ([], [1, 2, 3, 4, 5, 6]),
        (["layers.0"], [1, 2, 3, 4, 5, 6]),
        (["layers.1"], [1, 2, 3, 4, 5, 6]),
    ]
    switched = {(4, 1): GEMM_SPLITK, (5, 1): GEMM_SPLITK}
    b = _doc(build_run(tmp_path / "b.sqlite", Run(steps=6, gemm=switched, jitter_seed=2)))
    assert [e["steps"] for e in b["paths"] if e["region"] == ["layers.1"]] == [[1, 2, 3, 6], [4, 5]]
    diff = fp.compare(doc, b)
    (region,) = diff.regions
    assert (region.region, region.steps, region.count("variant")) == (("layers.1",), (4, 5), 1)
    assert (diff.first.region, diff.first.step, diff.first.change.position) == (("layers.1",), 4, 2)
    assert (
        "layers.1, step 4, device 0, launch #6 of step 4 (#2 of region layers.1): "
        in fp.board.text(diff, "a", "b")
    )


def test_without_nvtx_a_region_is_the_whole_capture_of_a_device(tmp_path):
    doc = _doc(build_run(tmp_path / "r.sqlite", Run(nvtx=False)))
    assert doc["regions"] == "step" and doc["steps"] == {"method": "period", "count": 3}
    assert [(e["device"], e["region"], e["steps"], e["launches"]) for e in doc["paths"]] == [
        (0, [], [1, 2, 3], 7)
    ]


def _torch_op_run(path, seqs):
    """Steps step_1.. with a layer range holding two PyTorch op ranges each (as
    torch.autograd.profiler.emit_nvtx labels them: per-call seq, op_id and sizes), each op
    launching one GEMM; ``seqs[s]`` is step s's first seq number."""
    from fixtures.fingerprint_runs import GEMM

    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.23.3")
    b.process(4242, "python train.py")
    b.gpu(0)
    t = 1_000_000_000
    for step, seq in enumerate(seqs, start=1):
        step_start, layer_start = t, t + 1_000
        t += 2_000
        for i in range(2):
            label = f"aten::linear, seq = {seq + i}, op_id = {seq * 7 + i}, sizes = [[{step}, 8]]"
            cid = b.runtime("cudaLaunchKernel_v7000", start=t + 100, end=t + 3_000)
            b.kernel(GEMM, start=t + 5_000, end=t + 9_000, correlation_id=cid, grid=(132, 1, 1))
            b.nvtx_range(label, start=t, end=t + 3_500)
            t += 10_000
        b.nvtx_range("layers.0", start=layer_start, end=t)
        t += 1_000
        b.nvtx_range(f"step_{step}", start=step_start, end=t)
        t += 20_000
    return b.write(path)


def test_torch_ranges_that_differ_only_in_seq_and_op_id_are_one_region(tmp_path):
    """PyTorch op labels carry a per-call seq and op_id (and the input sizes): the region
    keeps the op only, so every call of the op in a layer is one region and the steps
    collapse (with the numbers kept, each call was its own region: 250k on a 5M-kernel
    trace, and the fingerprint ran out of memory)."""
    doc = _doc(_torch_op_run(tmp_path / "t.sqlite", [10, 57, 311]))
    assert doc["steps"] == {"method": "marker", "count": 3}
    assert [(e["region"], e["steps"], e["launches"]) for e in doc["paths"]] == [
        (["layers.0", "aten::linear"], [1, 2, 3], 2)
    ]
    other = _doc(_torch_op_run(tmp_path / "o.sqlite", [1_000, 2_000, 3_000]))
    assert fp.dumps(other) == fp.dumps(doc)


@pytest.mark.parametrize("nvtx", [False, True], ids=["no_nvtx", "nvtx"])
def test_a_launch_beyond_cuda_limits_is_one_line_and_exit_2(tmp_path, capsys, nvtx):
    """A variant is packed into integers within CUDA's limits; a damaged export that breaks
    them is said so, not fingerprinted wrongly (with NVTX paths the launches are read into
    a table first, without into the sort: both say it)."""
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.23.3")
    b.process(4242, "python train.py")
    b.gpu(0)
    cid = b.runtime("cudaLaunchKernel_v7000", start=1_000, end=2_000)
    b.kernel("k", start=3_000, end=4_000, correlation_id=cid, grid=(1, 1, 1), block=(2048, 1, 1))
    if nvtx:
        b.nvtx_range("layers.0", start=500, end=2_500)
    path = b.write(tmp_path / "damaged.sqlite")
    rc, out, err = run_cli(["fingerprint", path], capsys)
    assert rc == 2 and out == "" and len(err.splitlines()) == 1
    assert "beyond CUDA's limits" in err


# -- comparing paths ---------------------------------------------------------------------
def test_a_trace_against_itself_jittered_is_identical(tmp_path):
    a = _doc(build_run(tmp_path / "a.sqlite"))
    b = _doc(build_run(tmp_path / "b.sqlite", Run(jitter_seed=3, origin_ns=5_000_000_000)))
    diff = fp.compare(a, b)
    assert diff.identical and diff.first is None and diff.figures["path_changed"] == 0


def test_a_grid_only_change_is_a_configuration_change(tmp_path):
    a = _doc(build_run(tmp_path / "a.sqlite"))
    b = _doc(build_run(tmp_path / "b.sqlite", Run(gemm_grid={(2, 1): (264, 1, 1)})))
    diff = fp.compare(a, b)
    f = diff.figures
    assert (f["config_changed"], f["variant_changed"], f["kernels_added"]) == (1, 0, 0)
    assert f["kernels_removed"] == 0 and diff.first_math is None
    (region,) = diff.regions
    assert (region.region, region.steps) == (("layers.1",), (2,))
    (change,) = region.changes
    assert change.kind == "config" and change.position == 2
    assert (change.a.grid, change.b.grid) == ((132, 1, 1), (264, 1, 1))


def test_a_variant_switch_names_the_first_divergence_and_its_danger_rule(tmp_path):
    a = _doc(build_run(tmp_path / "a.sqlite"))
    b = _doc(build_run(tmp_path / "b.sqlite", Run(gemm={(2, 1): GEMM_SPLITK, (3, 1): GEMM_SPLITK})))
    diff = fp.compare(a, b)
    assert diff.figures["variant_changed"] == 2 and diff.figures["danger_added"] == 2
    first = diff.first
    assert (first.region, first.step, first.device) == (("layers.1",), 2, 0)
    assert first.change.position == 2
    assert first.change.b.name == GEMM_SPLITK and "gemm_split_k" in first.change.danger_new
    text = fp.board.text(diff, "a", "b")
    assert (
        "first divergence: layers.1, step 2, device 0, launch #6 of step 2 (#2 of region layers.1): "
        f"{GEMM_SPLITK} replaced nvjet_tst_128x96_64x7_4x1_v_bz_bias_TNT" in text
    )


def test_an_added_kernel_is_added_not_a_variant(tmp_path):
    a = _doc(build_run(tmp_path / "a.sqlite", Run(nvtx=False)))
    b = _doc(build_run(tmp_path / "b.sqlite", Run(nvtx=False, merge={(3, 0)})))
    diff = fp.compare(a, b)
    (change,) = diff.regions[0].changes
    assert change.kind == "added" and change.b.name.startswith("vllm::merge_attn_states_kernel")
    assert change.position == 19 and change.danger == ("attention_merge",)
    assert diff.first.region == () and diff.first.step is None
    # The extra kernel breaks B's period, so B has no steps: compared over whole captures.
    assert a["steps"]["method"] == "period" and b["steps"]["method"] == "none"
    assert diff.note.startswith("the steps differ (A: 3 by period, B: 0 by none)")


def test_long_regions_keep_digests_and_still_locate_the_change(tmp_path, monkeypatch):
    small = build_module.Settings(build_module.settings().math_fields, 5, 20_000)
    monkeypatch.setattr(build_module, "settings", lambda: small)
    monkeypatch.setattr(build_module, "_steps_rows", _no_steps)
    a = _doc(build_run(tmp_path / "a.sqlite", Run(nvtx=False)))
    (entry,) = a["paths"]
    assert len(entry["sequence"]) == 5 and len(entry["blocks"]) == 5 and entry["launches"] == 21
    assert sum(n for _vid, n in entry["counts"]) == 21
    jittered = _doc(build_run(tmp_path / "j.sqlite", Run(nvtx=False, jitter_seed=5)))
    assert fp.compare(a, jittered).identical
    b = _doc(build_run(tmp_path / "b.sqlite", Run(nvtx=False, gemm={(3, 1): GEMM_SPLITK})))
    diff = fp.compare(a, b)
    assert diff.figures["path_changed"] == 1 and not diff.regions[0].changes
    assert "first differing block of 5 starts at launch #16" in diff.regions[0].unlisted


def test_demo_pair_first_divergence_and_the_cascade_merge(demo_docs):
    bs1, bs16 = demo_docs
    diff = fp.compare(bs1, bs16)
    assert diff.first.region == ("prefill",) and diff.first.change.kind == "config"
    math = diff.first_math
    # the first in launch order (layer 0's first GEMM, the capture's launch #4), not the
    # prefill's own launch #4 (the capture's #340: fingerprint.places)
    assert math.region == ("prefill", "model.layers.0") and math.change.kind == "variant"
    assert "192x192" in math.change.b.name and math.launch == 4
    merges = [
        c
        for r in diff.regions
        for c in r.changes
        if c.b is not None and c.b.name.startswith("vllm::merge_attn_states_kernel")
    ]
    assert len(merges) == 28  # every layer, in all 4 decode steps (steps 1-4 collapse)
    assert diff.figures["variant_changed"] >= 4 * 28
    assert {c.danger for c in merges} == {("attention_merge",)}
    assert {c.danger_new for c in merges} == {("attention_merge",)}  # a new risk there
    assert fp.compare(bs1, bs1).identical


def test_the_launches_are_read_once(tmp_path, monkeypatch):
    """One query reads the launches (fingerprint_launches); the step search takes its
    sequence from it (no steps_launches), and every other result is per name, unit or entry
    but the host's pause before each call of the period's first 50 steps (steps_host_gaps,
    as ``tracelens steps`` phases its steps: test_fpsteps), here every call."""
    path = build_run(tmp_path / "r.sqlite", Run(steps=30, layers=4, nvtx=False))
    heights = []
    for method in ("query", "query_rows"):
        real = getattr(tracelens.Trace, method)

        def counting(self, name, _real=real, **params):
            result = _real(self, name, **params)
            heights.append((name, result.height))
            return result

        monkeypatch.setattr(tracelens.Trace, method, counting)
    doc = _doc(path)
    assert doc["launches"] == 30 * (1 + 4 * 3)
    assert doc["steps"] == {"method": "period", "count": 30}
    names = [n for n, _h in heights]
    assert set(names) >= {"fingerprint_names", "fingerprint_launches", "fingerprint_paths"}
    assert "steps_launches" not in names
    big = [n for n, h in heights if h >= doc["launches"]]
    assert big == ["fingerprint_launches", "steps_host_gaps"]
    assert max(h for n, h in heights if n not in big) <= 30  # strings, units


def test_many_strings_take_the_extra_scan_and_give_the_same_document(tmp_path, monkeypatch):
    path = build_run(tmp_path / "r.sqlite", Run(merge={(2, 0)}))
    one_scan = _text(path)
    fewer = build_module.Settings(build_module.settings().math_fields, 4096, 0)
    monkeypatch.setattr(build_module, "settings", lambda: fewer)
    assert _text(path) == one_scan


def test_variants_that_share_a_lookup_key_give_the_same_document(tmp_path, monkeypatch):
    """A launch's variant is looked up by one integer of its three (name_id * spread' +
    variant_hi * spread + variant_lo); with spreads of 0 the key is variant_lo alone, which
    kernels of different names share: the lookup by the three integers gives the same
    document."""
    units = importlib.import_module("tracelens.fingerprint.units")
    path = build_run(tmp_path / "r.sqlite", Run(merge={(2, 0)}))
    by_key = _text(path)
    monkeypatch.setattr(units, "_SPREAD", 0)
    monkeypatch.setattr(units, "_SPREAD_NAME", 0)
    assert _text(path) == by_key


def test_size_grows_far_slower_than_the_launches(tmp_path, monkeypatch):
    """The 5M-kernel bound by ratio: past the first block, a structureless capture costs one
    digest (about 20 bytes) per block of launches, not bytes per launch. With blocks of 64,
    10x the launches adds under 0.5 byte per launch; with the shipped 4096 that is under
    0.01 (5M kernels: README, about 0.2 MB)."""
    small = build_module.Settings(build_module.settings().math_fields, 64, 20_000)
    monkeypatch.setattr(build_module, "settings", lambda: small)
    monkeypatch.setattr(build_module, "_steps_rows", _no_steps)
    one = len(_text(build_run(tmp_path / "1.sqlite", Run(steps=40, nvtx=False))))
    ten = len(_text(build_run(tmp_path / "10.sqlite", Run(steps=400, nvtx=False))))
    assert (ten - one) / (400 * 7 - 40 * 7) < 0.5


# -- files and the command line ----------------------------------------------------------
def test_cli_fingerprint_and_check(tmp_path, capsys):
    base = tmp_path / "bs1.json"
    rc, out, err = run_cli(["fingerprint", "--demo", "bs1", "-o", base], capsys)
    assert rc == 0 and out == "" and err == ""
    assert base.read_text() == fp.dumps(_doc(demo_path("bs1")))
    rc, out, _ = run_cli(["fingerprint", "--demo", "bs1", "--check", base], capsys)
    assert rc == 0 and out.startswith("numerical path: bs1.sqlite follows bs1.json exactly")
    rc, out, _ = run_cli(["fingerprint", "--demo", "bs16", "--check", base], capsys)
    assert rc == 1 and (
        "first change of math: prefill > model.layers.0, device 0, launch #4 of the capture "
        "(#2 of region prefill > model.layers.0): nvjet_tst_192x192" in out
    )
    rc, out, _ = run_cli(["fingerprint", "--demo", "bs16", "--check", base, "-f", "json"], capsys)
    assert rc == 1 and json.loads(out)["figures"]["path_changed"] == 1


def test_cli_diff_takes_a_fingerprint_on_either_side(tmp_path, capsys):
    base = tmp_path / "bs1.json"
    base.write_text(fp.dumps(_doc(demo_path("bs1"))))
    bs16 = demo_path("bs16")
    rc, out, err = run_cli(["diff", base, bs16], capsys)
    assert rc == 0 and out.startswith("numerical path: bs16.sqlite differs from bs1.json")
    rc, _out, err = run_cli(["diff", base, bs16, "--fail-if", "variant_changed"], capsys)
    assert rc == 1 and "gate tripped: variant_changed>0" in err
    rc, _out, err = run_cli(["diff", bs16, bs16, "--fail-if", "path_changed"], capsys)
    assert rc == 0 and err == ""
    rc, _out, err = run_cli(["diff", base, base, "--fail-if", "danger_added>0"], capsys)
    assert rc == 0


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON"),
        ('{"format": "something else"}', "not a tracelens fingerprint"),
        ('{"format": "tracelens-fingerprint", "version": 99}', "fingerprint format version 99"),
        ('{"format": "tracelens-fingerprint", "version": 1}', "format version 1, this tracelens"),
    ],
)
def test_a_bad_baseline_is_one_line_and_exit_2(tmp_path, capsys, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    rc, out, err = run_cli(["fingerprint", "--demo", "bs1", "--check", bad], capsys)
    assert rc == 2 and out == "" and message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("command", ["check", "diff"])
def test_a_version_9_baseline_must_be_regenerated(tmp_path, capsys, command):
    """Version 9 did not say which launches outside the steps are before the first step or
    after the last: a v9 baseline is refused (one line saying to regenerate it, exit 2)
    rather than compared, with --check and on either side of diff."""
    doc = _doc(demo_path("bs1"))
    assert doc["version"] == 12
    old = tmp_path / "v9.json"
    old.write_text(fp.dumps({**doc, "version": 9}))
    args = [["fingerprint", "--demo", "bs1", "--check", old]]
    if command == "diff":
        args = [["diff", old, demo_path("bs1")], ["diff", demo_path("bs1"), old]]
    for arg in args:
        rc, out, err = run_cli(arg, capsys)
        assert rc == 2 and out == "" and len(err.splitlines()) == 1, err
        assert "version 9, this tracelens reads versions 10, 11 and 12: the baseline must" in err


def _program(steps: int, changed: dict[tuple[int, int], tuple[str, int]], added: set[int]):
    """``steps`` repeats of a 60-kernel step as compare's Kernels; ``changed``: (step, slot)
    -> (name, grid) there; ``added``: steps that launch a merge kernel after slot 30."""
    from tracelens.fingerprint.compare import Kernel

    out = []
    for step in range(steps):
        for slot in range(60):
            name, grid = changed.get((step, slot), (f"k{slot}", 1))
            out.append(Kernel(name, (grid, 1, 1), (128, 1, 1), "gemm", (), ()))
            if slot == 30 and step in added:
                out.append(Kernel("merge", (1, 1, 1), (128, 1, 1), "other", (), ()))
    return out


def test_long_sequences_are_aligned_window_by_window(monkeypatch):
    """Past _EXACT_PAIRS launch pairs (a region over all its steps when the runs' steps
    differ: 9,000 x 8,998 launches here) the sequences are aligned in windows, never by one
    quadratic match, and each change is found where it is: a variant in step 40, a merge
    kernel added in step 70, a grid in step 100, B's capture three launches short."""
    edits = importlib.import_module("tracelens.fingerprint.edits")
    a = _program(150, {}, set())
    b = _program(150, {(40, 10): ("splitK", 1), (100, 5): ("k5", 8)}, {70})[:-3]
    sizes = []
    real = edits.difflib.SequenceMatcher

    def matcher(junk, x, y, autojunk):
        sizes.append(len(x) * len(y))
        return real(junk, x, y, autojunk)

    monkeypatch.setattr(edits.difflib, "SequenceMatcher", matcher)
    monkeypatch.setattr(edits, "_EDITS_MAX", 2)  # the fallback past the edit script's bound
    changes = edits._sequence_changes(a, b)
    assert len(a) * len(b) > edits._EXACT_PAIRS
    assert max(sizes) <= edits._WINDOW**2
    assert [(c.kind, c.position) for c in changes] == [
        ("variant", 40 * 60 + 10 + 1),
        ("added", 70 * 60 + 31 + 1),
        ("config", 100 * 60 + 5 + 2),
        ("removed", 8998),
        ("removed", 8999),
        ("removed", 9000),
    ]


def test_the_sorts_without_a_packed_key_give_the_same_document(tmp_path, monkeypatch):
    """The launch and unit orders come from one sort of a packed integer key (the row number
    in its low bits) when the columns' ranges fit in 63 bits; beyond that the columns are
    sorted (and the units ranked) as they are: the same document."""
    orders = importlib.import_module("tracelens.fingerprint.order")
    for nvtx in (False, True):
        path = build_run(tmp_path / f"r{nvtx}.sqlite", Run(merge={(2, 0)}, nvtx=nvtx))
        packed = _text(path)
        with monkeypatch.context() as patched:
            patched.setattr(orders, "_packed_key", lambda *args, **kwargs: None)
            assert _text(path) == packed


# -- captures of one program over other spans: a fact to state, not a path change (#11) ----
def test_a_capture_cut_short_follows_the_path_and_says_so(tmp_path, capsys):
    a = build_run(tmp_path / "a.sqlite", Run(steps=6))
    b = build_run(tmp_path / "b.sqlite", Run(steps=4))
    diff = fp.compare(_doc(a), _doc(b))
    assert diff.identical and diff.figures["path_changed"] == 0
    assert diff.capture == (
        "B's capture ends earlier (it holds 4 steps, A 6): A's last 14 launches are past its "
        "end, not compared; which capture started later is not known: every step is the same "
        "program, and a capture that started a step later reads as one that ended a step "
        "earlier (the documents hold no times)"  # 2 steps of 7
    )
    baseline = tmp_path / "a.json"
    baseline.write_text(fp.dumps(_doc(a)))
    rc, out, _ = run_cli(["fingerprint", b, "--check", baseline], capsys)
    assert rc == 0 and out.startswith(
        "numerical path: b.sqlite follows a.json over the launches both captures hold"
    )
    assert ". B's capture ends earlier (it holds 4 steps, A 6): A's last 14 launches" in out
    rc, _out, err = run_cli(["diff", a, b, "--fail-if", "path_changed"], capsys)
    assert rc == 0 and err == ""


def test_a_capture_started_later_and_cut_mid_step_follows_the_path(tmp_path):
    a = _doc(build_run(tmp_path / "a.sqlite", Run(steps=6)))
    shifted = _doc(build_run(tmp_path / "s.sqlite", Run(steps=4, first_step=3)))
    diff = fp.compare(a, shifted)
    assert diff.identical and diff.capture.startswith("B's capture ends earlier (it holds 4")
    cut = _doc(build_run(tmp_path / "c.sqlite", Run(steps=6, launches=5 * 7 + 3)))
    diff = fp.compare(a, cut)
    assert diff.identical and diff.figures["path_changed"] == 0
    assert diff.capture is not None and "A's last 4 launches are past its end" in diff.capture


def test_a_capture_cut_short_with_a_switch_fails_and_names_the_switch(tmp_path, capsys):
    a = build_run(tmp_path / "a.sqlite", Run(steps=6))
    b = build_run(tmp_path / "b.sqlite", Run(steps=4, gemm={(2, 1): GEMM_SPLITK}))
    diff = fp.compare(_doc(a), _doc(b))
    f = diff.figures
    assert (f["path_changed"], f["variant_changed"], f["kernels_removed"]) == (1, 1, 0)
    assert diff.first.change.b.name == GEMM_SPLITK and diff.first.region == ("layers.1",)
    assert diff.capture.startswith(
        "B's capture ends earlier (it holds 4 steps, A 6): A's last 14 launches are past its "
        "end, not compared; "
    )
    baseline = tmp_path / "a.json"
    baseline.write_text(fp.dumps(_doc(a)))
    rc, out, _ = run_cli(["fingerprint", b, "--check", baseline], capsys)
    assert rc == 1 and f"{GEMM_SPLITK} replaced nvjet_tst_128x96_64x7_4x1_v_bz_bias_TNT" in out
    rc, _out, err = run_cli(["diff", a, b, "--fail-if", "path_changed"], capsys)
    assert rc == 1 and "gate tripped: path_changed>0" in err


def test_a_kernel_added_in_every_step_is_not_a_cut_last_step(tmp_path):
    """The last step of A is a prefix of B's, but so is every step: a change, in each."""
    a = _doc(build_run(tmp_path / "a.sqlite", Run(steps=4)))
    b = _doc(build_run(tmp_path / "b.sqlite", Run(steps=4, merge={(s, 1) for s in range(1, 5)})))
    diff = fp.compare(a, b)
    assert diff.capture is None and diff.figures["kernels_added"] == 4
