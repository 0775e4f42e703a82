"""Danger-zone rules: determinism and batch-invariance risks (tracelens.danger)."""

from __future__ import annotations

import polars as pl
import pytest

from tracelens.danger import (
    LEVELS,
    danger_table,
    load_danger_rules,
    match_danger,
)
from tracelens.errors import UsageError

# Names marked "tsv" are verbatim from ../shared/kernel_names/real_kernel_names.tsv; the
# others are the real kernel names of the ops (from the libraries' sources) in nsys form.
FA2_SPLIT_TRUE = (  # tsv
    "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<256, 64, 64, 4, false, false, "
    "cutlass::bfloat16_t, Flash_kernel_traits<256, 64, 64, 4, cutlass::bfloat16_t> >, false, "
    "false, false, false, true, false, true, false>(flash::Flash_fwd_params)"
)
FA2_SPLIT_FALSE = (  # tsv
    "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, "
    "cutlass::half_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::half_t> >, true, false, false, "
    "false, true, false, false, false>(flash::Flash_fwd_params)"
)
FA2_FWD = (  # tsv
    "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<(int)128, (int)128, (int)64, (int)4, "
    "(bool)0, (bool)0, cutlass::bfloat16_t, Flash_kernel_traits<(int)128, (int)128, (int)64, "
    "(int)4, cutlass::bfloat16_t>>, (bool)0, (bool)0, (bool)0, (bool)0, (bool)0, (bool)1, (bool)0, "
    "(bool)0>(flash::Flash_fwd_params)"
)
SCATTER_ADD = (  # tsv
    "void at::native::_scatter_gather_elementwise_kernel<128, 4, at::native::_cuda_scatter_gather_"
    "internal_kernel<true, float>::operator()<at::native::ReduceAdd>(at::TensorIterator&, long, "
    "long, long, at::native::ReduceAdd const&)::{lambda(int)#1}>(int, at::native::_cuda_scatter_"
    "gather_internal_kernel<true, float>::operator()<at::native::ReduceAdd>(at::TensorIterator&, "
    "long, long, long, at::native::ReduceAdd const&)::{lambda(int)#1})"
)
GATHER = (  # tsv
    "void at::native::_scatter_gather_elementwise_kernel<128, 4, at::native::_cuda_scatter_gather_"
    "internal_kernel<false, at::native::OpaqueType<4> >::operator()<at::native::TensorAssign>(at::"
    "TensorIterator&, long, long, long, at::native::TensorAssign const&)::{lambda(int)#1}>(int)"
)
INDEX_PUT = (  # tsv
    "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::"
    "index_put_kernel_impl<at::native::OpaqueType<4> >(at::TensorIterator&, c10::ArrayRef<long>, "
    "c10::ArrayRef<long>)::{lambda(char*, char*, long)#1}>(at::TensorIteratorBase&)::{lambda(int)#1}>(int)"  # noqa: E501
)
INDEX = (  # tsv
    "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::"
    "index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, "
    "c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&)::{lambda(int)#1}>(int)"  # noqa: E501
)

CASES = [
    # (rule id, a name it must fire on, a benign name it must not fire on)
    (
        "gemm_split_k",
        "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_bias_TNT",
        "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_bias_TNT",
    ),  # noqa: E501
    (
        "gemm_split_k",
        "cutlass3x_sm90_tensorop_gemm_f16_f16_f32_void_f16_128x128x64_1x2x1_0_ntn_align8_stream_k_warpspecialized_cooperative_epi_nosmem",
        "flash_fwd_splitkv_kernel",
    ),  # noqa: E501
    (
        "gemm_split_k_reduce",
        "void splitKreduce_kernel<float, float, float, float, true, true, false>(cublasSplitKParams<float>, float const*)",
        "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_bias_TNT",
    ),  # noqa: E501
    ("cublas_heuristic_legacy", "ampere_sgemm_128x64_nn", "nvjet_tst_64x8_64x16_4x1_v_bz_TNT"),
    (
        "cublas_heuristic_legacy",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        "cutlass3x_sm90_sptensorop_s64x128x32spgemm_f16_f16_f32_void_f16_128x128x64_1x2x1_0_ntn_align8_warpspecialized_cooperative_epi_nosmem",
    ),  # noqa: E501
    ("cublas_heuristic_nvjet", "nvjet_tst_64x8_64x16_4x1_v_bz_TNT", "ampere_sgemm_128x64_nn"),
    (
        "attention_merge",
        "void vllm::merge_attn_states_kernel<__nv_bfloat16, 128>(__nv_bfloat16*, float*, __nv_bfloat16 const*)",
        "flash_fwd_kernel",
    ),  # noqa: E501
    (
        "attention_merge",
        "PersistentVariableLengthMergeStatesKernel",
        "BatchPrefillWithPagedKVCacheKernel",
    ),  # noqa: E501
    ("attention_split_kv", FA2_SPLIT_TRUE, FA2_SPLIT_FALSE),
    ("attention_split_kv_maybe", "kiln_flash::flash_fwd_splitkv_kernel", FA2_SPLIT_FALSE),
    (
        "attention_backward_atomics",
        "fmha_cutlassB_bf16_aligned_128x128_k128_sm80",
        "fmha_cutlassF_bf16_aligned_64x128_rf_sm80",
    ),  # noqa: E501
    (
        "attention_backward_atomics",
        "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t>, true, false, false, false, false, true, false, false>(pytorch_flash::Flash_bwd_params)",
        FA2_FWD,
    ),  # noqa: E501
    (
        "paged_attention_v2",
        "void vllm::paged_attention_v2_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128, (vllm::Fp8KVCacheDataType)0, false, 512>(float*)",
        "void vllm::paged_attention_v1_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128, (vllm::Fp8KVCacheDataType)0, false>(__nv_bfloat16*)",
    ),  # noqa: E501
    (
        "aten_index_add",
        "void at::native::indexFuncLargeIndex<float, int, unsigned int, 1, 1, -2, true, at::native::(anonymous namespace)::ReduceAdd>(at::cuda::detail::TensorInfo<float, unsigned int>)",
        "void at::native::(anonymous namespace)::indexSelectLargeIndex<float, int, unsigned int, 1, 1, -2, true>(at::cuda::detail::TensorInfo<float, unsigned int>)",
    ),  # noqa: E501
    ("aten_scatter_reduce", SCATTER_ADD, GATHER),
    ("aten_scatter_prod", SCATTER_ADD.replace("ReduceAdd", "ReduceMultiply"), SCATTER_ADD),
    ("aten_scatter_assign", SCATTER_ADD.replace("ReduceAdd", "TensorAssign"), GATHER),
    ("aten_index_put", INDEX_PUT, INDEX),
    (
        "aten_put_accumulate",
        "void at::native::index_elementwise_kernel<128, 4, at::native::cuda_take_put_kernel<float, at::native::put_kernel(at::TensorIterator&, at::TensorBase const&, bool)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float&, float const&)#2}>(at::TensorIterator&, at::TensorBase const&)::{lambda(int)#1}>(int)",
        INDEX_PUT,
    ),  # noqa: E501
    (
        "aten_embedding_backward",
        "compute_grad_weight",
        "void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 2ul>(int)",
    ),  # noqa: E501
    (
        "aten_embedding_backward",
        "void at::native::(anonymous namespace)::embedding_backward_feature_kernel<float, float, long>(long const*, float const*, float*, int, long, int)",
        "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*)",
    ),  # noqa: E501
    (
        "aten_pool_backward",
        "void at::native::(anonymous namespace)::atomic_adaptive_average_gradinput<float>(float*, float const*, int, int, int, int)",
        "void at::native::(anonymous namespace)::adaptive_average_pool<float>(float const*, float*, int, int, int, int, long, long, long)",
    ),  # noqa: E501
    (
        "aten_upsample_pad_backward",
        "void at::native::(anonymous namespace)::upsample_bilinear2d_backward_out_frame<float, float>(unsigned long, int, int, int, int, int, int, float, float, bool, float*, float const*)",
        "void at::native::(anonymous namespace)::upsample_nearest1d_out_frame<c10::BFloat16, &at::native::nearest_neighbor_compute_source_index>(c10::BFloat16 const*, unsigned long)",
    ),  # noqa: E501
    (
        "aten_upsample_pad_backward",
        "void at::native::grid_sampler_2d_backward_kernel<float, int>(int, at::cuda::detail::TensorInfo<float, int>)",
        "void at::native::grid_sampler_2d_kernel<float, int>(int, at::cuda::detail::TensorInfo<float, int>)",
    ),  # noqa: E501
    (
        "aten_histogram",
        "void at::cuda::detail::kernelHistogram1D<float, float, long, 1, 2, -1, (at::cuda::detail::CUDAHistogramMemoryType)1>(at::cuda::detail::TensorInfo<float, long>)",
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>, unsigned int, float, 4> >(int)",
    ),  # noqa: E501
    (
        "aten_cumsum_float",
        "void at_cuda_detail::cub::DeviceScanKernel<at_cuda_detail::cub::AgentScanPolicy<128, 15, float, (at_cuda_detail::cub::BlockLoadAlgorithm)3>, float*, float*>(float*, float*)",
        "void cub::DeviceScanKernel<cub::AgentScanPolicy<128, 15, int, (cub::BlockLoadAlgorithm)3, (cub::CacheLoadModifier)0>, int*, int*, cub::ScanTileState<int, true> >(int*, int*)",
    ),  # noqa: E501
    (
        "aten_nll_ctc_loss",
        "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*)",
        "void at::native::(anonymous namespace)::nll_loss_forward_no_reduce_cuda_kernel<float, long>(long, float const*)",
    ),  # noqa: E501
    (
        "cudnn_conv_algorithm",
        "sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_train",
        "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
    ),  # noqa: E501
    (
        "cudnn_conv_algorithm",
        "cudnn_train_volta_scudnn_128x128_stridedB_splitK_medium_nn_v1",
        "cudnn_infer_volta_scudnn_128x128_relu_medium_nn_v1",
    ),  # noqa: E501
    (
        "nccl_reduction",
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
        "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)",
    ),  # noqa: E501
    (
        "nccl_reduction",
        "ncclKernel_AllReduce_RING_LL_Sum_float",
        "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)",
    ),  # noqa: E501
    (
        "nccl_generic",
        "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)",
        "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)",
    ),  # noqa: E501
    (
        "custom_allreduce",
        "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)",
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
    ),  # noqa: E501
    (
        "custom_allreduce",
        "moefinalize_allreduce_fusion_kernel_oneshot_lamport",
        "void vllm::moe::moe_align_block_size_kernel<int>",
    ),  # noqa: E501
    (
        "atomics_named",
        "void at::native::(anonymous namespace)::atomic_adaptive_average_gradinput<float>(float*, float const*, int)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int)",
    ),  # noqa: E501
]


@pytest.mark.parametrize(("rule_id", "positive", "negative"), CASES, ids=[c[0] for c in CASES])
def test_rule_fires_on_real_name_and_not_on_benign_one(rule_id, positive, negative):
    assert rule_id in [h.rule_id for h in match_danger(positive)], match_danger(positive)
    assert rule_id not in [h.rule_id for h in match_danger(negative)], match_danger(negative)


def test_every_builtin_rule_is_exercised():
    assert {c[0] for c in CASES} == {r.id for r in load_danger_rules()}


def test_builtin_rules_explain_themselves():
    for r in load_danger_rules():
        assert r.level in LEVELS
        for text in (r.why, r.fix, r.source):
            assert text.strip() and "\n" not in text, r.id
        assert r.why.rstrip().endswith("."), r.id


def test_plain_flash_forward_is_not_high_risk():
    for name in ("flash_fwd_kernel", FA2_FWD, FA2_SPLIT_FALSE):
        assert not [h for h in match_danger(name) if h.level == "high"], name


def test_merge_attn_states_is_high():
    hits = match_danger("merge_attn_states_kernel")
    assert [(h.rule_id, h.level) for h in hits] == [("attention_merge", "high")]
    assert "disable_cascade_attn=True" in hits[0].fix


def test_fixes_name_the_documented_knobs():
    fixes = " ".join(r.fix for r in load_danger_rules())
    for knob in (
        "CUBLAS_WORKSPACE_CONFIG=:4096:8",
        "torch.use_deterministic_algorithms(True)",
        "disable_cascade_attn=True",
        "VLLM_BATCH_INVARIANT=1",
        "NCCL_ALGO",
    ):
        assert knob in fixes, knob


def test_all_rules_that_fire_are_reported():
    name = "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_bias_TNT"
    assert [h.rule_id for h in match_danger(name)] == ["gemm_split_k"]
    legacy_split = "cudnn_train_volta_scudnn_128x128_stridedB_splitK_medium_nn_v1"
    assert [h.rule_id for h in match_danger(legacy_split)] == ["cudnn_conv_algorithm"]
    hits = match_danger(
        "void at::native::(anonymous namespace)::atomic_adaptive_average_gradinput<float>(float*)"
    )  # noqa: E501
    assert [h.rule_id for h in hits] == ["aten_pool_backward", "atomics_named"]


def test_benign_kernels_have_no_findings():
    for name in (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int)",  # noqa: E501
        "void vllm::rms_norm_kernel<c10::BFloat16, 8, 2>(c10::BFloat16*)",
        "triton_poi_fused_add_mul_0",
        "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, (vllm::Fp8KVCacheDataType)1>(int)",  # noqa: E501
        "Memcpy DtoD (Device -> Device)",
        "",
    ):
        assert match_danger(name) == [], name


# -- danger_table -----------------------------------------------------------------------------
def _census(rows):
    return pl.DataFrame(
        rows,
        schema={
            "name": pl.String,
            "instances": pl.Int64,
            "total_ns": pl.Int64,
            "time_pct": pl.Float64,
        },  # noqa: E501
        orient="row",
    )


def test_danger_table_on_a_small_frame():
    kernels = _census(
        [
            ("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", 100, 9_000_000, 30.0),
            ("merge_attn_states_kernel", 20, 1_000_000, 3.3),
            ("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_bias_TNT", 50, 5_000_000, 16.7),
            ("ampere_sgemm_128x64_nn", 10, 2_000_000, 6.7),
            ("triton_poi_fused_add_mul_0", 500, 13_000_000, 43.3),
        ]
    )
    out = danger_table(kernels)
    assert out.columns == [
        "rule_id",
        "level",
        "name",
        "instances",
        "total_ns",
        "time_pct",
        "why",
        "fix",
        "source",
    ]
    assert out.select("rule_id", "level", "name", "instances", "total_ns").rows() == [
        (
            "gemm_split_k",
            "high",
            "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_bias_TNT",
            50,
            5_000_000,
        ),  # noqa: E501
        ("attention_merge", "high", "merge_attn_states_kernel", 20, 1_000_000),
        ("cublas_heuristic_legacy", "medium", "ampere_sgemm_128x64_nn", 10, 2_000_000),
        ("cublas_heuristic_nvjet", "info", "nvjet_tst_64x8_64x16_4x1_v_bz_TNT", 100, 9_000_000),
    ]
    assert out["time_pct"].to_list() == [16.7, 3.3, 6.7, 30.0]
    assert out.schema["total_ns"] == pl.Int64 and out.schema["time_pct"] == pl.Float64
    assert all(out["why"].str.len_chars() > 20)


def test_danger_table_is_empty_with_schema_when_nothing_fires():
    out = danger_table(_census([("triton_poi_fused_add_mul_0", 1, 10, 100.0)]))
    assert out.height == 0
    assert out.schema == pl.Schema(
        {
            "rule_id": pl.String,
            "level": pl.String,
            "name": pl.String,
            "instances": pl.Int64,
            "total_ns": pl.Int64,
            "time_pct": pl.Float64,
            "why": pl.String,
            "fix": pl.String,
            "source": pl.String,
        }
    )
    assert danger_table(_census([])).height == 0


def test_danger_table_needs_its_columns():
    with pytest.raises(UsageError, match="missing instances"):
        danger_table(pl.DataFrame({"name": ["x"], "total_ns": [1], "time_pct": [1.0]}))


# -- user rules -------------------------------------------------------------------------------
def test_user_danger_rules(tmp_path):
    path = tmp_path / "danger.toml"
    path.write_text(
        """
[[rule]]
id = "acme_atomic_gemm"
level = "high"
on = "base"
tokens = ["acme_gemm"]
why = "Our in-house GEMM accumulates with atomics."
fix = "ACME_DETERMINISTIC=1"

[[rule]]
id = "cublas_heuristic_nvjet"   # override a built-in: silence it
level = "info"
on = "base"
regex = '^never_matches$'
why = "Silenced."
fix = "-"

[[rule]]
id = "fa2_kv_was_not_split"
level = "info"
tokens = ["flash_fwd_splitkv"]
fields = { split = "false" }
why = "Split-KV kernel that did not split."
fix = "-"
""",
        encoding="utf-8",
    )
    rules = load_danger_rules(path)
    assert rules.sources[0] == str(path)
    assert [h.rule_id for h in match_danger("acme_gemm_kernel", rules)] == ["acme_atomic_gemm"]
    assert match_danger("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", rules) == []
    assert "fa2_kv_was_not_split" in [h.rule_id for h in match_danger(FA2_SPLIT_FALSE, rules)]
    assert "fa2_kv_was_not_split" not in [h.rule_id for h in match_danger(FA2_SPLIT_TRUE, rules)]
    # the built-in set is unchanged
    assert [h.rule_id for h in match_danger("nvjet_tst_64x8_64x16_4x1_v_bz_TNT")] == [
        "cublas_heuristic_nvjet"
    ]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (
            '[[rule]]\nid = "x"\nlevel = "severe"\ntokens = ["a"]\nwhy = "w"\nfix = "f"\n',
            "'level' must be one of",
        ),  # noqa: E501
        (
            '[[rule]]\nid = "x"\nlevel = "high"\ntokens = ["a"]\nwhy = "w"\n',
            "'fix' must be a non-empty string",
        ),  # noqa: E501
        (
            '[[rule]]\nid = "x"\nlevel = "high"\ntokens = ["a"]\nwhy = "w"\nfix = "f"\nfields = { split = 1 }\n',
            "'fields' must be",
        ),  # noqa: E501
        ('[[rule]]\nid = "x"\nlevel = "high"\nwhy = "w"\nfix = "f"\n', "at least one of"),
        (
            '[[rule]]\nid = "x"\nlevel = "high"\nregex = "(x*)*"\nwhy = "w"\nfix = "f"\n',
            "catastrophic",
        ),  # noqa: E501
        ("[[rule]\n", "not valid TOML"),
    ],
)
def test_bad_danger_file_raises_usage_error(tmp_path, content, problem):
    path = tmp_path / "bad.toml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError) as err:
        load_danger_rules(path)
    msg = str(err.value)
    assert str(path) in msg and problem in msg and "\n" not in msg, msg
