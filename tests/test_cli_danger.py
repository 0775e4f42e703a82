"""The danger command: determinism / batch-invariance risks of a trace, CI exit codes, user
rules; output pinned."""

from __future__ import annotations

import json

import pytest
from conftest import needs_shared, run_cli

import tracelens
from tracelens.danger import danger_kernels, kernels_at_or_above, load_danger_rules
from tracelens.demo import demo_path
from tracelens.errors import UsageError
from tracelens.filters import EventFilter

SPLIT_K_NVJETS = [
    "nvjet_tst_64x24_64x16_4x1_v_bz_splitK_TNT",
    "nvjet_sm90_tst_32x64_64x16_1x2_h_bz_splitK_TNN",
    "nvjet_sm90_tst_192x8_64x8_4x1_v_bz_splitK_bias_TNT",
]
MERGE = (
    "void vllm::merge_attn_states_kernel<__nv_bfloat16, 128u>(__nv_bfloat16*, float*, "
    "__nv_bfloat16 const*, float const*, __nv_bfloat16 const*, float const*, unsigned int, "
    "unsigned int, unsigned int)"
)
NONE = "no danger-zone kernels found\n"


def test_bs16_lists_the_cascade_merge_and_split_k_gemms(capsys):
    rc, out, err = run_cli(["danger", "--demo", "bs16", "-f", "json"], capsys)
    assert (rc, err) == (0, "")
    rows = json.loads(out)
    by_rule = {}
    for r in rows:
        by_rule.setdefault(r["rule_id"], []).append(r)
    merge = [r for r in by_rule["attention_merge"] if r["name"] == MERGE]
    assert len(merge) == 1
    assert merge[0]["level"] == "high"
    assert (merge[0]["instances"], merge[0]["total_ns"], merge[0]["time_pct"]) == (
        112,
        370_282,
        0.2,
    )
    assert "cascade" in merge[0]["why"] and "disable_cascade_attn=True" in merge[0]["fix"]
    assert merge[0]["source"].startswith("vLLM source")
    assert [r["name"] for r in by_rule["gemm_split_k"]] == SPLIT_K_NVJETS
    assert {r["level"] for r in by_rule["gemm_split_k"]} == {"high"}
    assert by_rule["gemm_split_k_reduce"][0]["name"].startswith(
        "void cublasLt::splitKreduce_kernel<"
    )
    # every finding explains itself and says where the rule comes from
    for r in rows:
        assert r["why"] and r["fix"] and r["source"], r
    # high first, then by time
    levels = [r["level"] for r in rows]
    assert levels == sorted(levels, key=["high", "medium", "info"].index)
    # shares are census's (kernel time)
    with tracelens.open(demo_path("bs16")) as trace:
        census = {r["name"]: r for r in trace.census().iter_rows(named=True)}
    for r in rows:
        c = census[r["name"]]
        assert (r["instances"], r["total_ns"], r["time_pct"]) == (
            c["instances"],
            c["total_ns"],
            c["time_pct"],
        )


def test_bs16_table_is_exact(capsys):
    rc, out, err = run_cli(["danger", "--demo", "bs16"], capsys)
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert lines[:5] == [
        "danger zone of bs16.sqlite: determinism and batch-invariance risks",
        "",
        "  Level   Rule                     Time (%)    Total (ns)   Instances   Name",
        " " + "─" * 158,
        "  high    gemm_split_k                  4.1     6,073,232         112   nvjet_tst_64x24_64x16_4x1_v_bz_splitK_TNT",
    ]
    rows = [line for line in lines if line.startswith(("  high ", "  medium ", "  info "))]
    kernel_rows = rows[:11]
    assert [r.split()[:2] for r in kernel_rows] == [
        ["high", "gemm_split_k"],
        ["high", "attention_split_kv"],
        ["high", "gemm_split_k"],
        ["high", "gemm_split_k"],
        ["high", "gemm_split_k_reduce"],
        ["high", "attention_merge"],
        ["high", "attention_merge"],
        ["info", "cublas_heuristic_nvjet"],
        ["info", "cublas_heuristic_nvjet"],
        ["info", "cublas_heuristic_nvjet"],
        ["info", "cublas_heuristic_nvjet"],
    ]
    assert (
        "11 findings on 11 kernels (7 high, 4 info); Time (%) = share of all kernel GPU time, "
        "as census"
    ) in lines
    # then each rule once, with why and what to do
    i = lines.index("what the rules mean and what to do")
    assert lines[i + 2].split() == ["Level", "Rule", "Why", "Fix"]
    legend = [r.split()[:2] for r in rows[11:]]
    assert legend == [
        ["high", "gemm_split_k"],
        ["high", "attention_split_kv"],
        ["high", "gemm_split_k_reduce"],
        ["high", "attention_merge"],
        ["info", "cublas_heuristic_nvjet"],
    ]
    assert "disable_cascade_attn=True" in out and "VLLM_BATCH_INVARIANT=1" in out
    assert max(len(line) for line in lines) <= 160


def test_markdown_has_the_sources(capsys):
    rc, out, _ = run_cli(["danger", "--demo", "bs16", "-f", "markdown"], capsys)
    assert rc == 0
    lines = out.splitlines()
    assert lines[:4] == [
        "**danger zone of bs16.sqlite: determinism and batch-invariance risks**",
        "",
        "| Level | Rule | Time (%) | Total (ns) | Instances | Name |",
        "| :--- | :--- | ---: | ---: | ---: | :--- |",
    ]
    i = lines.index("**what the rules mean and what to do**")
    assert lines[i + 2] == "| Level | Rule | Why | Fix | Source |"
    merge = next(line for line in lines[i:] if "`attention_merge`" in line)
    assert "csrc/attention/merge_attn_states.cu" in merge


def test_csv_is_flat_with_every_column(capsys):
    rc, out, _ = run_cli(["danger", "--demo", "bs1", "-f", "csv", "--top", "1"], capsys)
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "rule_id,level,name,instances,total_ns,time_pct,why,fix,source"
    assert lines[1].startswith("gemm_split_k,high,nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT,112,")
    assert len(lines) == 2


# -- CI gate --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("level", "count"), [("high", 7), ("medium", 7), ("info", 11)])
def test_fail_on_exits_1_after_printing(level, count, capsys):
    rc, out, err = run_cli(["danger", "--demo", "bs16", "--fail-on", level], capsys)
    assert rc == 1
    assert out.startswith("danger zone of bs16.sqlite")
    assert err == f"tracelens: danger: {count} kernels at level {level} or above\n"


def test_fail_on_counts_every_kernel_not_only_the_rows_shown(capsys):
    rc, out, err = run_cli(
        ["danger", "--demo", "bs16", "--fail-on", "high", "--top", "2", "-f", "csv"], capsys
    )
    assert rc == 1 and len(out.splitlines()) == 3
    assert err == "tracelens: danger: 7 kernels at level high or above\n"
    rc, out, _ = run_cli(["danger", "--demo", "bs16", "--top", "2"], capsys)
    assert "11 findings on 11 kernels (7 high, 4 info) (first 2 shown)" in out


@needs_shared
def test_one_info_kernel_passes_high_and_fails_info(trace_copies, capsys):
    path = trace_copies["nsys2025.5_balinski_2gpu"]
    rc, out, err = run_cli(["danger", path, "--fail-on", "medium"], capsys)
    assert (rc, err) == (0, "")
    assert "atomics_named" in out
    assert "1 finding on 1 kernel (1 info)" in out
    rc, _, err = run_cli(["danger", path, "--fail-on", "info"], capsys)
    assert (rc, err) == (1, "tracelens: danger: 1 kernel at level info or above\n")


@needs_shared
def test_no_risky_kernels_is_one_line_and_exit_0(trace_copies, capsys):
    path = trace_copies["nsys2022.4_gaussian_7gpu"]
    for args in ([], ["--fail-on", "info"], ["-f", "markdown"]):
        rc, out, err = run_cli(["danger", path, *args], capsys)
        assert (rc, out, err) == (0, NONE, ""), args
    rc, out, _ = run_cli(["danger", path, "-f", "json"], capsys)
    assert (rc, out) == (0, "[]\n")
    rc, out, _ = run_cli(["danger", path, "-f", "csv"], capsys)
    assert (rc, out) == (0, "rule_id,level,name,instances,total_ns,time_pct,why,fix,source\n")


def test_filters_that_keep_no_kernel(capsys, tmp_path):
    rc, out, err = run_cli(["danger", "--demo", "bs16", "--device", "4"], capsys)
    assert (rc, out, err) == (0, NONE, "tracelens: no GPU work on device 4; devices present: 0\n")
    dest = tmp_path / "danger.txt"
    rc, out, err = run_cli(["danger", "--demo", "bs16", "--end", "1s", "-o", dest], capsys)
    assert (rc, out) == (0, "")
    assert err == (
        "tracelens: window until 1.00 s is outside the trace's span 2.00 s–2.16 s from session "
        "start\n"
    )
    assert dest.read_text() == NONE


# -- user rules -----------------------------------------------------------------------------------
USER_RULES = """
[[rule]]
id = "our_rms_norm"
level = "medium"
on = "base"
tokens = ["fused_add_rms_norm_kernel"]
why = "Our RMSNorm reduces in a block-size-dependent order."
fix = "Pin the block size."

[[rule]]
id = "cublas_heuristic_nvjet"
level = "info"
on = "base"
regex = '^never_matches$'
why = "Silenced."
fix = "-"
"""


def test_user_rules_add_and_override(tmp_path, capsys):
    rules = tmp_path / "ours.toml"
    rules.write_text(USER_RULES, encoding="utf-8")
    rc, out, _ = run_cli(["danger", "--demo", "bs16", "--rules", rules, "-f", "json"], capsys)
    rows = json.loads(out)
    assert rc == 0
    ours = [r for r in rows if r["rule_id"] == "our_rms_norm"]
    assert [(r["level"], r["instances"], r["total_ns"], r["source"]) for r in ours] == [
        ("medium", 280, 1_404_713, "")
    ]
    assert "cublas_heuristic_nvjet" not in {r["rule_id"] for r in rows}
    assert [r["level"] for r in rows] == ["high"] * 7 + ["medium"]
    rc, _, err = run_cli(
        ["danger", "--demo", "bs16", "--rules", rules, "--fail-on", "medium"], capsys
    )
    assert (rc, err) == (1, "tracelens: danger: 8 kernels at level medium or above\n")


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[[rule]\n", "not valid TOML"),
        (
            '[[rule]]\nid = "x"\nlevel = "severe"\ntokens = ["a"]\nwhy = "w"\nfix = "f"\n',
            "rule 1 (id 'x'): 'level' must be one of high, medium, info, not 'severe'",
        ),
    ],
)
def test_bad_rules_file_is_one_line_and_exit_2(tmp_path, capsys, content, problem):
    rules = tmp_path / "bad.toml"
    rules.write_text(content, encoding="utf-8")
    rc, out, err = run_cli(["danger", "--demo", "bs16", "--rules", rules], capsys)
    assert (rc, out) == (2, "")
    assert err.startswith(f"tracelens: {rules}: ") and problem in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-on", "critical"], "unknown --fail-on 'critical'; use one of: high, medium, info"),
        (["--top", "-1"], "--top must be 0 (every row) or more (got -1)"),
        (["--format", "html"], "unknown --format 'html'; use one of: table, csv, json, markdown"),
    ],
)
def test_bad_options(args, message, capsys):
    rc, out, err = run_cli(["danger", "--demo", "bs16", *args], capsys)
    assert (rc, out, err) == (2, "", f"tracelens: {message}\n")


# -- library --------------------------------------------------------------------------------------
def test_library_function_and_trace_method(tmp_path):
    rules = tmp_path / "ours.toml"
    rules.write_text(USER_RULES, encoding="utf-8")
    with tracelens.open(demo_path("bs16")) as trace:
        df = trace.danger()
        assert danger_kernels(trace, rules=load_danger_rules()).equals(df)
        assert danger_kernels(trace, rules=rules).equals(
            danger_kernels(trace, rules=load_danger_rules(rules))
        )
        assert danger_kernels(trace, top=3).equals(df.head(3))
        assert danger_kernels(trace, where=EventFilter(device=7)).is_empty()
        assert danger_kernels(trace, top=0).equals(df)  # every row, as census
        with pytest.raises(UsageError, match=r"^top must be 0 \(every row\) or more"):
            danger_kernels(trace, top=-1)
    assert df.columns == [
        "rule_id", "level", "name", "instances", "total_ns", "time_pct", "why", "fix", "source"
    ]  # fmt: skip
    assert kernels_at_or_above(df, "high") == 7
    assert kernels_at_or_above(df, "info") == 11
    with pytest.raises(UsageError, match="unknown level 'low'"):
        kernels_at_or_above(df, "low")
