"""lineup: GPU time by kernel category, checked against census + classify and the memory
summary computed independently, on the demo traces, real exports and built fixtures; CLI
output, options and errors pinned.

Coverage of the category rules themselves (>= 95% of the names in real_kernel_names.tsv land
in a category other than "other") is test_categories.py::test_category_coverage_at_least_95_percent;
it is not repeated here.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from conftest import has_cuda_work, needs_shared, run_cli, shared_traces

import tracelens
from tracelens.categories import classify, load_rules
from tracelens.demo import demo_path
from tracelens.errors import MissingDataError, UsageError
from tracelens.filters import EventFilter
from tracelens.lineup import category_summary, unclassified_kernels

builder = pytest.importorskip("fixtures.builder")


def _round1(x: float) -> float:
    # half away from zero, as DuckDB's round() in the census query
    return int(x * 10 + 0.5) / 10


def _expected_categories(trace, where=None, rules=None) -> dict[str, tuple[int, int]]:
    """{category: (calls, total_ns)} from census (kernels, classified one by one) plus the
    memory summary (every memcpy kind and memset is 'memory')."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    if trace.has_table("CUPTI_ACTIVITY_KIND_KERNEL"):
        for r in trace.census(where=where).iter_rows(named=True):
            acc = out[classify(r["name"], rules).category]
            acc[0] += r["instances"]
            acc[1] += r["total_ns"]
    if trace.has_table("CUPTI_ACTIVITY_KIND_MEMCPY") or trace.has_table(
        "CUPTI_ACTIVITY_KIND_MEMSET"
    ):
        for r in trace.memory_time(where=where).iter_rows(named=True):
            out["memory"][0] += r["count"]
            out["memory"][1] += r["total_ns"]
    return {k: (v[0], v[1]) for k, v in out.items()}


def _category_rows(df) -> dict[str, tuple[int, int]]:
    rows = df.filter(df["subfamily"].is_null())
    return {r["category"]: (r["calls"], r["total_ns"]) for r in rows.iter_rows(named=True)}


# -- totals equal census + classify -------------------------------------------------------------
# The demo traces' numbers, written out: every total is census + classify + memory summary
# (the independent computation below checks the same numbers without literals).
DEMO_GOLDEN = {
    "bs1": {
        "gemm": (794, 28_649_986),
        "attention": (420, 3_525_677),
        "normalization": (285, 1_220_588),
        "elementwise": (290, 1_169_889),
        "memory": (559, 895_975),
        "reduction": (10, 69_519),
    },
    "bs16": {
        "gemm": (794, 139_592_467),
        "attention": (532, 6_351_785),
        "elementwise": (290, 1_468_035),
        "normalization": (285, 1_430_358),
        "memory": (555, 944_823),
        "reduction": (10, 83_332),
    },
}


@pytest.mark.parametrize("demo", ["bs1", "bs16"])
def test_demo_totals_equal_census_plus_classify(demo):
    with tracelens.open(demo_path(demo)) as trace:
        df = trace.lineup()
        expected = _expected_categories(trace)
    assert _category_rows(df) == expected == DEMO_GOLDEN[demo]
    # largest first, and the shares are of the whole (kernels + memcpy + memset)
    cats = df.filter(df["subfamily"].is_null())
    assert cats["total_ns"].to_list() == sorted(cats["total_ns"].to_list(), reverse=True)
    grand = sum(t for _, t in expected.values())
    for r in cats.iter_rows(named=True):
        assert r["time_pct"] == _round1(r["total_ns"] * 100 / grand)
        assert r["avg_ns"] == _round1(r["total_ns"] / r["calls"])


@needs_shared
@pytest.mark.parametrize(
    "stem",
    # Exports without CUDA data (CPU-only, NVTX-only) exit 3: see test_no_cuda_data.
    [p.stem for p in shared_traces() if has_cuda_work(p)],
)
def test_real_traces_equal_census_plus_classify(stem, trace_copies):
    with tracelens.open(trace_copies[stem]) as trace:
        df = category_summary(trace)
        expected = _expected_categories(trace)
    assert _category_rows(df) == expected
    assert sum(df.filter(df["subfamily"].is_null())["time_pct"]) == pytest.approx(100, abs=0.5)


@needs_shared
def test_real_trace_golden_rows(trace_copies, capsys):
    # nsys 2026.1 export of a PyTorch program: one ATen reduction (census: 2,689 ns), one
    # fill (1,440 ns) and one device-to-host copy (memory: 1,632 ns); shares of 5,761 ns.
    rc, out, err = run_cli(["lineup", trace_copies["nsys2026.1_mock_2k"], "-f", "csv"], capsys)
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "category,subfamily,time_pct,total_ns,calls,avg_ns,top_kernel_ns,top_kernel",
        "reduction,,46.7,2689,1,2689.0,2689,reduce_kernel",
        "memory,,28.3,1632,1,1632.0,1632,[CUDA memcpy DtoH]",
        "memory,[CUDA memcpy DtoH],28.3,1632,1,1632.0,1632,[CUDA memcpy DtoH]",
        "elementwise,,25.0,1440,1,1440.0,1440,vectorized_elementwise_kernel",
    ]


# -- memory rows ---------------------------------------------------------------------------------
def _memory_sources() -> list[tuple[str, str]]:
    sources = [("demo", "bs1"), ("demo", "bs16")]
    return sources + [("shared", p.stem) for p in shared_traces()]


@pytest.mark.parametrize(("kind", "key"), _memory_sources())
def test_memcpy_and_memset_rows_equal_the_memory_summary(kind, key, request):
    if kind == "demo":
        path = demo_path(key)
    else:
        path = request.getfixturevalue("trace_copies")[key]
    with tracelens.open(path) as trace:
        if not (
            trace.has_table("CUPTI_ACTIVITY_KIND_MEMCPY")
            or trace.has_table("CUPTI_ACTIVITY_KIND_MEMSET")
        ):
            pytest.skip("no memory operations in this export")
        memory = trace.memory_time()
        df = trace.lineup()
    ours = {
        r["subfamily"]: (r["calls"], r["total_ns"], r["top_kernel"])
        for r in df.filter(df["subfamily"].str.starts_with("[CUDA")).iter_rows(named=True)
    }
    assert set(df.filter(df["subfamily"].str.starts_with("[CUDA"))["category"]) == {"memory"}
    assert ours == {
        r["operation"]: (r["count"], r["total_ns"], r["operation"])
        for r in memory.iter_rows(named=True)
    }


@needs_shared
def test_unified_memory_copies_are_memory(trace_copies):
    with tracelens.open(trace_copies["nsys2022.2_unified_memory"]) as trace:
        df = trace.lineup()
    labels = df.filter(df["subfamily"].str.contains("Unified Memory"))
    assert labels.height >= 2 and set(labels["category"]) == {"memory"}
    assert classify("[CUDA Unified Memory memcpy DtoH]").subfamily == "memcpy"


# -- grouping and filters on a built export ------------------------------------------------------
@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    return builder.build_mixed(tmp_path_factory.mktemp("mixed"), "3.25.0")


def _expected_by(fx, key) -> dict[tuple[int, str], tuple[int, int]]:
    out: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])
    x = fx.expected
    for k in x.kernels:
        acc = out[(key(k), classify(builder.display(k.name)).category)]
        acc[0] += 1
        acc[1] += k.duration
    for m in [*x.memcpys, *x.memsets]:
        acc = out[(key(m), "memory")]
        acc[0] += 1
        acc[1] += m.end - m.start
    return {k: (v[0], v[1]) for k, v in out.items()}


def test_by_device_on_two_devices(mixed):
    with tracelens.open(mixed.path) as trace:
        df = category_summary(trace, by="device")
    assert df.columns[0] == "device"
    cats = df.filter(df["subfamily"].is_null())
    got = {
        (r["device"], r["category"]): (r["calls"], r["total_ns"])
        for r in cats.iter_rows(named=True)
    }
    assert got == _expected_by(mixed, lambda e: e.device)
    assert sorted(set(cats["device"])) == [0, 1]
    # grouped by device first, each device's categories largest first
    assert cats["device"].to_list() == sorted(cats["device"].to_list())
    for dev in (0, 1):
        totals = cats.filter(cats["device"] == dev)["total_ns"].to_list()
        assert totals == sorted(totals, reverse=True)
    # shares are of the whole trace, so they add up to 100 over every device
    grand = sum(t for _, t in _expected_by(mixed, lambda e: 0).values())
    for r in cats.iter_rows(named=True):
        assert r["time_pct"] == _round1(r["total_ns"] * 100 / grand)


def test_by_pid_and_stream(mixed):
    with tracelens.open(mixed.path) as trace:
        by_pid = category_summary(trace, by="pid", subfamily=False)
        by_stream = category_summary(trace, by="stream", subfamily=False)
    got = {
        (r["pid"], r["category"]): (r["calls"], r["total_ns"]) for r in by_pid.iter_rows(named=True)
    }
    assert got == _expected_by(mixed, lambda e: e.pid)
    assert set(by_pid["pid"]) == {builder.TRAIN_PID, builder.EVAL_PID}
    got = {
        ((r["device"], r["pid"], r["stream"]), r["category"]): (r["calls"], r["total_ns"])
        for r in by_stream.iter_rows(named=True)
    }
    # the builder leaves copies and memsets on TraceBuilder's default stream, 7; a stream is
    # a stream id of one device and process (stream 7 of each process is its own)
    assert got == _expected_by(mixed, lambda e: (e.device, e.pid, getattr(e, "stream", 7)))
    assert {s for (_, _, s), _ in got} == {7, 13, 14}


def test_filters_apply_to_kernels_and_memory(mixed):
    with tracelens.open(mixed.path) as trace:
        dev1 = category_summary(trace, where=EventFilter(device=1))
        expected = {
            cat: v for (dev, cat), v in _expected_by(mixed, lambda e: e.device).items() if dev == 1
        }
        assert _category_rows(dev1) == expected
        assert category_summary(trace, where=EventFilter(device=9)).is_empty()
        first = min(c.start for c in mixed.expected.memcpys)
        window = category_summary(trace, where=EventFilter(start_ns=first, end_ns=first + 1))
    # the window [first, first + 1) keeps exactly the copy that starts there
    assert window.select("category", "subfamily", "calls").rows() == [
        ("memory", None, 1),
        ("memory", "[CUDA memcpy HtoD]", 1),
    ]


# -- subfamily breakdown ------------------------------------------------------------------------
GEMMS = {
    "nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT": ("nvjet", 3, 50_000),
    "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, "
    "__nv_bfloat16, false, float, __nv_bfloat16, __nv_bfloat16, true, true, false, false>"
    "(cublasLt::cublasSplitKParams<float>, float const*)": ("splitk_reduce", 3, 2_000),
    builder.XMMA_GEMM: ("cublas_legacy", 2, 40_000),
    "ampere_sgemm_128x64_tn": ("cublas_legacy", 1, 30_000),
    "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>"
    "(T1::Params)": ("cutlass", 2, 20_000),
    "triton_tem_fused_mm_0": ("triton_template", 1, 15_000),
    "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, "
    "cublasGemvParamsEx<int, float const*, float const*, float const*, float>>(float, float)": (
        "gemv",
        4,
        1_000,
    ),
    "matmul_kernel": ("(none)", 1, 5_000),
}
ATTENTION = {
    builder.FLASH_FWD: ("flash_attention", 2, 9_000),
    "void vllm::merge_attn_states_kernel<__nv_bfloat16, 128u>(__nv_bfloat16*, float*)": (
        "merge",
        2,
        1_500,
    ),
}
NORMS = {"void vllm::rms_norm_kernel<c10::BFloat16, 8, 2>(c10::BFloat16*)": (None, 3, 700)}


@pytest.fixture(scope="module")
def gemm_trace(tmp_path_factory):
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.25.0")
    b.process(4242, "python gemms.py")
    t = 1_000
    for table in (GEMMS, ATTENTION, NORMS):
        for name, (_sub, count, dur) in table.items():
            for _ in range(count):
                b.kernel(name, start=t, end=t + dur)
                t += dur + 1_000
    b.memcpy("HtoD", 1_000, start=t, end=t + 700)
    b.memset(256, start=t + 1_000, end=t + 1_300)
    return b.write(tmp_path_factory.mktemp("gemms") / "gemms.sqlite")


def _parts(df, category):
    rows = df.filter((df["category"] == category) & df["subfamily"].is_not_null())
    return {r["subfamily"]: (r["calls"], r["total_ns"]) for r in rows.iter_rows(named=True)}


def _expected_parts(table):
    out: dict[str | None, list[int]] = defaultdict(lambda: [0, 0])
    for sub, count, dur in table.values():
        out[sub][0] += count
        out[sub][1] += count * dur
    return {k: tuple(v) for k, v in out.items()}


def test_gemm_breaks_down_by_library_by_default(gemm_trace):
    with tracelens.open(gemm_trace) as trace:
        df = category_summary(trace)
    assert _parts(df, "gemm") == _expected_parts(GEMMS)
    assert set(_parts(df, "gemm")) == {
        "nvjet",
        "splitk_reduce",
        "cublas_legacy",
        "cutlass",
        "triton_template",
        "gemv",
        "(none)",
    }
    assert _parts(df, "memory") == {"[CUDA memcpy HtoD]": (1, 700), "[CUDA memset]": (1, 300)}
    assert _parts(df, "attention") == {}  # only with --subfamily
    # each breakdown follows its category, largest first, and adds up to it
    gemm = df.filter(df["category"] == "gemm")
    assert gemm["subfamily"][0] is None
    totals = gemm["total_ns"].to_list()[1:]
    assert totals == sorted(totals, reverse=True) and sum(totals) == gemm["total_ns"][0]
    assert gemm.filter(gemm["subfamily"] == "cublas_legacy")["top_kernel"].to_list() == [
        builder.XMMA_GEMM
    ]


def test_subfamily_everywhere_or_nowhere(gemm_trace):
    with tracelens.open(gemm_trace) as trace:
        every = category_summary(trace, subfamily=True)
        none = category_summary(trace, subfamily=False)
        only_attention = category_summary(trace, subfamily=["attention"])
    assert _parts(every, "attention") == _expected_parts(ATTENTION)
    # a breakdown that would only say "(none)" is left out
    assert _parts(every, "normalization") == {}
    assert none["subfamily"].null_count() == none.height == 4
    assert set(only_attention.filter(only_attention["subfamily"].is_not_null())["category"]) == {
        "attention"
    }


def test_top_keeps_the_largest_categories_with_their_breakdown(gemm_trace):
    with tracelens.open(gemm_trace) as trace:
        df = category_summary(trace, top=2)
        with pytest.raises(UsageError, match=r"^top must be 0 \(every row\) or more"):
            category_summary(trace, top=-1)
    assert df.filter(df["subfamily"].is_null())["category"].to_list() == ["gemm", "attention"]
    assert df.height == 2 + len(_expected_parts(GEMMS))


def test_name_kind_spells_the_top_kernel(gemm_trace):
    with tracelens.open(gemm_trace) as trace:
        demangled = category_summary(trace, subfamily=False)
        short = category_summary(trace, subfamily=False, name="short")
    attention = lambda df: df.filter(df["category"] == "attention")["top_kernel"].item()  # noqa: E731
    assert attention(demangled) == builder.FLASH_FWD
    assert attention(short) == "flash_fwd_kernel"
    assert demangled["total_ns"].to_list() == short["total_ns"].to_list()


# -- --show-other and --rules ----------------------------------------------------------------------
def test_show_other_lists_unclassified_kernels(tmp_path, capsys):
    fx = builder.build_one_kernel(tmp_path, "3.25.0")
    rc, out, err = run_cli(["lineup", fx.path, "--show-other", "-f", "csv"], capsys)
    assert (rc, err) == (0, "")
    assert out == "time_pct,total_ns,calls,base,name\n100.0,12345,1,vectorAdd,vectorAdd\n"


@needs_shared
def test_show_other_table_and_rules_that_classify_them(trace_copies, capsys, tmp_path):
    path = trace_copies["nsys2025.5_balinski_2gpu"]
    rc, out, err = run_cli(["lineup", path, "--show-other", "--top", "3"], capsys)
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "lineup of nsys2025.5_balinski_2gpu.sqlite: kernels no category rule matched",
        "",
        "  Time (%)   Total (ns)   Calls   Base                 Name",
        " " + "─" * 132,
        "      19.6       38,050      18   solve_1bc_kernel     "
        "solve_1bc_kernel(int, const int *, int *, int *, const float *, int *, int *)",
        "      10.3       20,001      18   reset_d_changed      reset_d_changed()",
        "       6.7       12,960       5   find_most_negative   "
        "find_most_negative(const float *, int, int *, int *)",
        "",
        "16 kernel names matched no rule (the first 3 shown); add rules for them with --rules FILE",
    ]
    rules = tmp_path / "hungarian.toml"
    rules.write_text(
        '[[rule]]\nid = "hungarian"\ncategory = "reduction"\nsubfamily = "hungarian"\n'
        "on = \"base\"\nregex = '^(?:solve_|find_|check_)'\n",
        encoding="utf-8",
    )
    rc, out, _ = run_cli(["lineup", path, "--rules", rules, "--subfamily", "-f", "json"], capsys)
    rows = json.loads(out)
    assert rc == 0
    with tracelens.open(path) as trace:
        expected = _expected_categories(trace, rules=load_rules(rules))
    assert {
        r["category"]: (r["calls"], r["total_ns"]) for r in rows if r["subfamily"] is None
    } == expected
    assert expected["reduction"][1] > 0
    hungarian = [r for r in rows if r["subfamily"] == "hungarian"]
    assert [r["category"] for r in hungarian] == ["reduction"]
    assert hungarian[0]["total_ns"] == expected["reduction"][1]
    rc, out, _ = run_cli(["lineup", path, "--rules", rules, "--show-other", "-f", "csv"], capsys)
    assert "solve_1bc_kernel" not in out and "reset_d_changed" in out


def test_rules_override_a_builtin_rule(tmp_path, capsys):
    rules = tmp_path / "mine.toml"
    rules.write_text(
        '[[rule]]\nid = "splitk_reduce"\ncategory = "reduction"\nsubfamily = "split_k"\n'
        'on = "base"\ntokens = ["splitKreduce"]\n',
        encoding="utf-8",
    )
    with tracelens.open(demo_path("bs16")) as trace:
        mine = category_summary(trace, rules=rules)
        assert category_summary(trace, rules=load_rules(rules)).equals(mine)
        expected = _expected_categories(trace, rules=load_rules(rules))
    assert _category_rows(mine) == expected
    assert _category_rows(mine)["gemm"] == (794 - 229, 139_592_467 - 670_202)
    assert _category_rows(mine)["reduction"] == (10 + 229, 83_332 + 670_202)
    assert "splitk_reduce" not in set(mine["subfamily"].drop_nulls())


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[[rule]\n", "not valid TOML"),
        ('[[rule]]\nid = "x"\ncategory = "gemms"\ntokens = ["a"]\n', "'category' must be one of"),
    ],
)
def test_bad_rules_file_is_one_line_and_exit_2(tmp_path, capsys, content, problem):
    rules = tmp_path / "bad.toml"
    rules.write_text(content, encoding="utf-8")
    rc, out, err = run_cli(["lineup", "--demo", "bs16", "--rules", rules], capsys)
    assert (rc, out) == (2, "")
    assert err.startswith(f"tracelens: {rules}: ") and problem in err
    assert err.count("\n") == 1


def test_missing_rules_file(tmp_path, capsys):
    rc, out, err = run_cli(["lineup", "--demo", "bs1", "--rules", tmp_path / "no.toml"], capsys)
    assert (rc, out, err) == (2, "", f"tracelens: {tmp_path / 'no.toml'}: rules file not found\n")


# -- CLI ----------------------------------------------------------------------------------------
def test_demo_table_is_exact(capsys):
    rc, out, err = run_cli(["lineup", "--demo", "bs16"], capsys)
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "lineup of bs16.sqlite: GPU time by category",
        "",
        "  Category        Subfamily            Time (%)    Total (ns)   Calls    Avg (ns)   Top kernel (ns)   Top kernel",
        " " + "─" * 153,
        "  gemm                                     93.1   139,592,467     794   175,809.2       101,342,858   nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_bias_TNN",
        "                  nvjet                    92.7   138,922,265     565   245,880.1       101,342,858   nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_bias_TNN",
        "                  splitk_reduce             0.4       670,202     229     2,926.6           670,202   splitKreduce_kernel",
        "  attention                                 4.2     6,351,785     532    11,939.4         2,571,766   flash_fwd_splitkv_kernel",
        "  elementwise                               1.0     1,468,035     290     5,062.2           909,476   act_and_mul_kernel",
        "  normalization                             1.0     1,430,358     285     5,018.8         1,404,713   fused_add_rms_norm_kernel",
        "  memory                                    0.6       944,823     555     1,702.4           506,321   [CUDA memset]",
        "                  [CUDA memset]             0.3       506,321     429     1,180.2           506,321   [CUDA memset]",
        "                  [CUDA memcpy DtoD]        0.1       188,959      53     3,565.3           188,959   [CUDA memcpy DtoD]",
        "                  copy                      0.1       131,731      33     3,991.8           112,247   elementwise_kernel",
        "                  [CUDA memcpy HtoD]        0.1        93,789      30     3,126.3            93,789   [CUDA memcpy HtoD]",
        "                  index                     0.0        17,998       5     3,599.6            17,998   indexSelectSmallIndex",
        "                  [CUDA memcpy DtoH]        0.0         6,025       5     1,205.0             6,025   [CUDA memcpy DtoH]",
        "  reduction                                 0.1        83,332      10     8,333.2            45,466   cunn_SoftMaxForward",
        "",
        "6 category rows; Time (%) = share of 149,870,800 ns of GPU time (kernels + memcpy + memset)",
    ]


def test_csv_json_markdown_and_units(capsys):
    rc, out, _ = run_cli(
        ["lineup", "--demo", "bs1", "--no-subfamily", "-f", "csv", "--timeunit", "ms"], capsys
    )
    assert rc == 0
    assert out.splitlines()[:3] == [
        "category,subfamily,time_pct,total_ms,calls,avg_ms,top_kernel_ms,top_kernel",
        "gemm,,80.6,28.649986,794,0.0360831,10.281838,nvjet_tst_64x8_64x16_2x4_h_bz_TNT",
        "attention,,9.9,3.525677,420,0.0083945,2.66572,flash_fwd_splitkv_kernel",
    ]
    rc, out, _ = run_cli(["lineup", "--demo", "bs1", "-f", "json", "--name", "demangled"], capsys)
    rows = json.loads(out)
    assert rows[0] == {
        "category": "gemm",
        "subfamily": None,
        "time_pct": 80.6,
        "total_ns": 28_649_986,
        "calls": 794,
        "avg_ns": 36_083.1,
        "top_kernel_ns": 10_281_838,
        "top_kernel": "nvjet_tst_64x8_64x16_2x4_h_bz_TNT",
    }
    assert rows[3]["top_kernel"].startswith("void flash::flash_fwd_splitkv_kernel<")
    rc, out, _ = run_cli(["lineup", "--demo", "bs1", "-f", "markdown", "--top", "1"], capsys)
    assert out.splitlines() == [
        "**lineup of bs1.sqlite: GPU time by category**",
        "",
        "| Category | Subfamily | Time (%) | Total (ns) | Calls | Avg (ns) | Top kernel (ns) | Top kernel |",
        "| :--- | :--- | ---: | ---: | ---: | ---: | ---: | :--- |",
        "| gemm |  | 80.6 | 28,649,986 | 794 | 36,083.1 | 10,281,838 | `nvjet_tst_64x8_64x16_2x4_h_bz_TNT` |",
        "|  | nvjet | 78.9 | 28,046,958 | 565 | 49,640.6 | 10,281,838 | `nvjet_tst_64x8_64x16_2x4_h_bz_TNT` |",
        "|  | splitk_reduce | 1.7 | 603,028 | 229 | 2,633.3 | 603,028 | `splitKreduce_kernel` |",
    ]


def test_by_device_cli(mixed, capsys, tmp_path):
    dest = tmp_path / "lineup.csv"
    rc, out, err = run_cli(
        ["lineup", mixed.path, "--by", "device", "--no-subfamily", "-f", "csv", "-o", dest], capsys
    )
    assert (rc, out, err) == (0, "", "")
    lines = dest.read_text().splitlines()
    assert (
        lines[0]
        == "device,category,subfamily,time_pct,total_ns,calls,avg_ns,top_kernel_ns,top_kernel"
    )
    expected = _expected_by(mixed, lambda e: e.device)
    got = {}
    for line in lines[1:]:
        dev, cat, _sub, _pct, total, calls = line.split(",")[:6]
        got[(int(dev), cat)] = (int(calls), int(total))
    assert got == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--by", "gpu"], "unknown --by 'gpu'; use one of: device, stream, pid"),
        (["--name", "long"], "unknown --name 'long'; use one of: demangled, short, mangled"),
        (["--format", "xml"], "unknown --format 'xml'; use one of: table, csv, json, markdown"),
        (["--top", "-1"], "--top must be 0 (every row) or more (got -1)"),
        (["--start", "soon"], "--start 'soon' is not a time"),
    ],
)
def test_bad_options(args, message, capsys):
    rc, out, err = run_cli(["lineup", "--demo", "bs1", *args], capsys)
    assert (rc, out) == (2, "")
    assert err.startswith(f"tracelens: {message}") and err.count("\n") == 1


@needs_shared
@pytest.mark.parametrize("stem", [p.stem for p in shared_traces() if not has_cuda_work(p)])
def test_no_cuda_data(stem, trace_copies, capsys):
    path = trace_copies[stem]
    with tracelens.open(path) as trace, pytest.raises(MissingDataError):
        category_summary(trace)
    rc, out, err = run_cli(["lineup", path], capsys)
    assert (rc, out) == (3, "")
    assert err == (
        f"tracelens: {path}: no CUDA kernel, memcpy or memset data: was it captured with -t cuda?\n"
    )
    # findings lists every rule skipped (as nsys analyze does), but a gate on it must not
    # pass: it looked at nothing
    rc, out, err = run_cli(["findings", path, "--fail-on", "any"], capsys)
    assert rc == 3 and "0 of 8 rules found something" in out
    assert err == (
        "tracelens: findings: --fail-on no rule could look: each was skipped (gpu_gaps: the "
        "export has no CUPTI_ACTIVITY_KIND_KERNEL or CUPTI_ACTIVITY_KIND_MEMCPY or "
        "CUPTI_ACTIVITY_KIND_MEMSET table (nothing of that kind was captured))\n"
    )
    rc, _, err = run_cli(["findings", path, "--fail-on", "sync_memcpy"], capsys)
    assert rc == 3 and err.startswith("tracelens: findings: --fail-on sync_memcpy could not look")
    assert run_cli(["findings", path], capsys)[0] == 0


def test_memory_only_export(tmp_path):
    fx = builder.build_no_kernels(tmp_path, "3.0.0")
    with tracelens.open(fx.path) as trace:
        df = category_summary(trace)
        assert unclassified_kernels(trace).is_empty()
    assert df.select("category", "subfamily", "calls", "total_ns").rows() == [
        ("memory", None, 2, 118_000),
        ("memory", "[CUDA memcpy HtoD]", 1, 60_000),
        ("memory", "[CUDA memcpy DtoH]", 1, 58_000),
    ]


def test_show_other_when_everything_is_classified(capsys):
    rc, out, err = run_cli(["lineup", "--demo", "bs16", "--show-other"], capsys)
    assert (rc, out, err) == (
        0,
        "no unclassified kernels: every kernel matched a category rule\n",
        "",
    )
    rc, out, _ = run_cli(["lineup", "--demo", "bs16", "--show-other", "-f", "json"], capsys)
    assert out == "[]\n"


def test_caption_says_what_the_share_is_of(mixed, capsys):
    rc, out, _ = run_cli(["lineup", "--demo", "bs16", "--top", "2"], capsys)
    assert rc == 0
    assert out.splitlines()[-1] == (
        "2 category rows (top 2); Time (%) = share of all GPU time (kernels + memcpy + memset)"
    )
    rc, out, _ = run_cli(["lineup", mixed.path, "--by", "device"], capsys)
    x = mixed.expected
    grand = sum(k.duration for k in x.kernels) + sum(m.end - m.start for m in x.memcpys + x.memsets)
    rows = len(_expected_by(mixed, lambda e: e.device))
    assert out.splitlines()[-1] == (
        f"{rows} category rows over 2 devices; Time (%) = share of {grand:,} ns of GPU time "
        "(kernels + memcpy + memset)"
    )
