"""Kernel categories: rules as data, boundary-safe matching, user rules (tracelens.categories)."""

from __future__ import annotations

import collections
import tomllib

import polars as pl
import pytest
from conftest import SHARED

from tracelens.categories import (
    _NESTED_QUANTIFIER,
    CATEGORIES,
    Subject,
    builtin_rules_path,
    classify,
    classify_column,
    load_rules,
    parse_matcher,
)
from tracelens.errors import UsageError

TSV = SHARED / "kernel_names" / "real_kernel_names.tsv"


@pytest.fixture(scope="module")
def tsv_names() -> list[str]:
    if not TSV.is_file():
        pytest.skip(f"{TSV} not found (../shared is absent)")
    return [
        line.split("\t", 1)[1]
        for line in TSV.read_text(encoding="utf-8").splitlines()
        if "\t" in line and not line.startswith("#")
    ]


def test_category_coverage_at_least_95_percent(tsv_names):
    other = [n for n in tsv_names if classify(n).category == "other"]
    assert len(other) / len(tsv_names) <= 0.05, other
    counts = collections.Counter(classify(n).category for n in tsv_names)
    # the real names exercise every category except the fallback
    assert set(CATEGORIES) - {"other"} <= set(counts), counts


def test_required_categories_in_display_order():
    required = [
        "gemm",
        "attention",
        "elementwise",
        "reduction",
        "normalization",
        "communication",
        "memory",
        "sort_sampling",
        "moe",
        "quantization",
        "compiler_generated",
    ]
    assert set(required) <= set(CATEGORIES)
    assert CATEGORIES[0] == "gemm" and CATEGORIES[-1] == "other"
    assert len(set(CATEGORIES)) == len(CATEGORIES)


def test_builtin_rules_are_documented_and_valid():
    doc = tomllib.loads(builtin_rules_path().read_text(encoding="utf-8"))
    ids = [r["id"] for r in doc["rule"]]
    assert len(ids) == len(set(ids))
    for r in doc["rule"]:
        assert r["category"] in CATEGORIES, r["id"]
        assert r["why"].strip() and "\n" not in r["why"], r["id"]
        if "regex" in r:
            assert not _NESTED_QUANTIFIER.search(r["regex"]), r["id"]
    assert len(load_rules()) == len(ids)


# -- substring traps --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "category"),
    [
        # 'mul' inside 'matmul' is not an elementwise multiply
        ("matmul_kernel", "gemm"),
        ("void fused_matmul_kernel<float>(float*)", "gemm"),
        # nvjet names contain no 'gemm', and '_badd_' is beta-add, not an elementwise add
        ("nvjet_tst_64x8_64x16_4x1_v_badd_TNT", "gemm"),
        ("nvjet_sm90_tst_192x8_64x8_4x1_v_bz_splitK_bias_TNT", "gemm"),
        # Inductor names carry op names that must not decide the category
        ("triton_poi_fused_add_mul_0", "compiler_generated"),
        ("triton_red_fused_native_layer_norm_0", "compiler_generated"),
        ("triton_poi_fused_convolution_relu_3", "compiler_generated"),
        ("triton_tem_fused_mm_0", "gemm"),
        ("triton_tem_fused_flex_attention_0", "attention"),
        # 'norm' inside 'normal' (random init) is not a normalization
        (
            "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl*>(at::TensorBase const&, double, double, at::CUDAGeneratorImpl*)::{lambda()#1}>(long)",  # noqa: E501
            "elementwise",
        ),
        ("normal_kernel", "elementwise"),
        # NormTwoOps inside a reduce_kernel is a reduction
        (
            "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::NormTwoOps<float, float, float>, unsigned int, float, 4> >(int)",  # noqa: E501
            "reduction",
        ),
        # rotary *embedding* is elementwise, not an embedding-table lookup
        ("void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*)", "elementwise"),
        # topkGatingSoftmax is MoE routing, not a softmax reduction
        ("void vllm::moe::topkGatingSoftmax<8, 128, 4, 16>(float const*)", "moe"),
        # cuDNN SDPA names say 'fprop' but they are attention
        (
            "cudnn_generated_fort_native_sdpa_sm120_flash_fprop_f16_knob_3_64x64x128_4x1x1_cga1x1x1",
            "attention",
        ),
        # implicit-GEMM convolutions are convolutions
        (
            "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",  # noqa: E501
            "convolution",
        ),
        # an elementwise kernel whose functor copies is a copy
        (
            "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int)",  # noqa: E501
            "memory",
        ),
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int)",
            "elementwise",
        ),  # noqa: E501
        ("moefinalize_allreduce_fusion_kernel_oneshot_lamport", "communication"),
        ("void vllm::merge_attn_states_kernel<__nv_bfloat16, 128>(int)", "attention"),
        ("Memset (Unknown)", "memory"),
        ("[CUDA memcpy Device-to-Host]", "memory"),
    ],
)
def test_traps(name, category):
    assert classify(name).category == category, classify(name)


@pytest.mark.parametrize(
    ("token", "text", "hit"),
    [
        ("mul", "matmul_kernel", False),
        ("mul", "CUDAFunctor_mul", True),
        ("mul", "MulFunctor", True),
        ("add", "nvjet_tst_64x8_64x16_4x1_v_badd_TNT", False),
        ("add", "CUDAFunctorOnSelf_add", True),
        ("norm", "normal_kernel", False),
        ("norm", "rms_norm_kernel", True),
        ("rms_norm", "FusedAddRMSNormKernel", True),
        ("rms_norm", "rms_kernel_norm", False),  # words must be consecutive
        ("gemm", "nvjet_tst_64x8_64x16_4x1_v_bz_TNT", False),
        ("gemm", "ampere_bf16_s16816gemm_bf16", True),
        ("gemm", "sgemm_kernel", False),  # 'sgemm' is its own word
        ("split_k", "flash_fwd_splitkv_kernel", False),
        ("split_k", "nvjet_tst_x_splitK_TNT", True),
        ("softmax", "cunn_SoftMaxForward", False),  # 'SoftMax' is two words
        ("SoftMax", "cunn_SoftMaxForward", True),
    ],
)
def test_word_boundary_matching(token, text, hit):
    m = parse_matcher({"tokens": [token], "on": "name"})
    assert m.matches(Subject(text, text, text)) is hit


def test_tokens_never_span_two_identifiers():
    m = parse_matcher({"tokens": ["rms_norm"]})
    assert not m.matches(Subject.of("foo<rms, norm>"))
    assert m.matches(Subject.of("foo<rms_norm>"))


# -- user rules -------------------------------------------------------------------------------
def test_user_rules_extend_and_override(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(
        """
version = 1
[[rule]]
id = "acme_widgets"
category = "quantization"
subfamily = "acme"
on = "base"
tokens = ["acme_widget"]
why = "our in-house quantizer"

[[rule]]
id = "nvjet"                     # same id as a built-in: replaces it
category = "elementwise"
on = "base"
regex = '^nvjet_'
""",
        encoding="utf-8",
    )
    rules = load_rules(path)
    assert rules.sources[0] == str(path)
    assert [r.id for r in rules].count("nvjet") == 1
    got = classify("void acme::acme_widget_kernel<float>(float*)", rules)
    assert (got.category, got.subfamily, got.rule_id) == ("quantization", "acme", "acme_widgets")
    assert classify("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", rules).category == "elementwise"
    # built-ins are untouched
    assert classify("nvjet_tst_64x8_64x16_4x1_v_bz_TNT").category == "gemm"
    assert classify("acme_widget_kernel").category == "other"


def test_user_rules_come_before_builtins(tmp_path):
    path = tmp_path / "first.toml"
    path.write_text(
        '[[rule]]\nid = "my_copies"\ncategory = "other"\ntokens = ["CatArrayBatchedCopy"]\n',
        encoding="utf-8",
    )
    rules = load_rules(path)
    name = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 1, 128, 1>(float*)"  # noqa: E501
    assert classify(name).category == "memory"
    assert classify(name, rules).rule_id == "my_copies"


BAD_FILES = {
    "not_toml": ("[[rule]\nid = 1", "not valid TOML"),
    "unknown_key": (
        '[[rule]]\nid = "x"\ncategory = "gemm"\ntokenz = ["a"]\n',
        "unknown key 'tokenz'",
    ),  # noqa: E501
    "bad_category": (
        '[[rule]]\nid = "x"\ncategory = "gemms"\ntokens = ["a"]\n',
        "'category' must be one of",
    ),  # noqa: E501
    "bad_regex": ('[[rule]]\nid = "x"\ncategory = "gemm"\nregex = "(unclosed"\n', "invalid regex"),
    "nested_quantifier": (
        '[[rule]]\nid = "x"\ncategory = "gemm"\nregex = "^(a+)+$"\n',
        "catastrophic backtracking",
    ),
    "missing_id": ('[[rule]]\ncategory = "gemm"\ntokens = ["a"]\n', "missing 'id'"),
    "duplicate_id": (
        '[[rule]]\nid = "x"\ncategory = "gemm"\ntokens = ["a"]\n'
        '[[rule]]\nid = "x"\ncategory = "gemm"\ntokens = ["b"]\n',
        "duplicate id",
    ),
    "tokens_not_list": ('[[rule]]\nid = "x"\ncategory = "gemm"\ntokens = 3\n', "list of strings"),
    "token_not_identifier": (
        '[[rule]]\nid = "x"\ncategory = "gemm"\ntokens = ["a::b"]\n',
        "not an identifier",
    ),
    "no_condition": ('[[rule]]\nid = "x"\ncategory = "gemm"\n', "at least one of"),
    "bad_scope": (
        '[[rule]]\nid = "x"\ncategory = "gemm"\non = "demangled"\ntokens = ["a"]\n',
        "'on' must be",
    ),  # noqa: E501
    "top_level_typo": ('[[rules]]\nid = "x"\n', "unknown top-level key 'rules'"),
    "bad_version": ("version = 2\n", "unsupported rules file version"),
    "not_utf8": (b"\xff\xfe[[rule]]", "not valid TOML"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_malformed_rules_file_raises_usage_error(tmp_path, case):
    content, problem = BAD_FILES[case]
    path = tmp_path / f"{case}.toml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError) as err:
        load_rules(path)
    msg = str(err.value)
    assert str(path) in msg and problem in msg, msg
    assert "\n" not in msg
    assert err.value.exit_code == 2


def test_missing_rules_file(tmp_path):
    with pytest.raises(UsageError, match="rules file not found") as err:
        load_rules(tmp_path / "nope.toml")
    assert str(tmp_path / "nope.toml") in str(err.value)


def test_empty_user_file_changes_nothing(tmp_path):
    path = tmp_path / "empty.toml"
    path.write_text("# nothing yet\n", encoding="utf-8")
    assert [r.id for r in load_rules(path)] == [r.id for r in load_rules()]


# -- columns ----------------------------------------------------------------------------------
def test_classify_column_distinct_then_join():
    names = ["nvjet_tst_64x8_64x16_4x1_v_bz_TNT", "triton_poi_fused_add_mul_0", None] * 50_000
    out = classify_column(pl.Series("k", names))
    assert out.columns == ["name", "category", "subfamily", "rule_id"]
    assert out.height == len(names)
    assert out["name"].to_list() == names
    assert out["category"].to_list()[:3] == ["gemm", "compiler_generated", None]
    assert out["subfamily"].to_list()[:2] == ["nvjet", "inductor"]
    assert out["rule_id"].to_list()[:2] == ["nvjet", "inductor"]


def test_classify_column_with_user_rules(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text(
        '[[rule]]\nid = "x"\ncategory = "moe"\non = "base"\nregex = "^nvjet_"\n', encoding="utf-8"
    )
    out = classify_column(pl.Series(["nvjet_tst_64x8_64x16_4x1_v_bz_TNT"]), load_rules(path))
    assert out["category"].to_list() == ["moe"]


def test_decode_and_classify_agree(tsv_names):
    from tracelens.kernelnames import decode

    for n in tsv_names:
        k, c = decode(n), classify(n)
        assert (k.category, k.subfamily, k.rule_id) == (c.category, c.subfamily, c.rule_id), n
