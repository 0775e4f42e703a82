"""What the demo traces run (see :mod:`tracelens.demo`): the kernels (real names), the
GEMM kernels cuBLASLt picks at each batch size, the modelled mean durations, and the copies
and memsets of each pass."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Kernel:
    """A kernel the demo launches: its real name and what each launch asks for."""

    name: str
    registers: int
    block: tuple[int, int, int]
    static_shared: int = 0
    dynamic_shared: int = 0
    api: str = "cudaLaunchKernel_v7000"

    @property
    def cluster(self) -> tuple[int, int, int]:
        # nvjet names carry the cluster shape: nvjet_..._<tile>_<kblock>_<cluster>_...
        m = re.match(r"^nvjet_(?:sm\d+_)?[a-z]+_\d+x\d+_\d+x\d+_(\d+)x(\d+)_", self.name)
        return (int(m.group(1)), int(m.group(2)), 1) if m else (0, 0, 0)


def nvjet(name: str) -> Kernel:
    # cuBLASLt launches its kernels through the driver API, 3 warpgroups, TMA + big smem.
    return Kernel(name, 168, (384, 1, 1), 0, 200_704, api="cuLaunchKernelEx")


K = {
    "rms_norm": Kernel(
        "void vllm::rms_norm_kernel<c10::BFloat16, 8, 2>(c10::BFloat16*, c10::BFloat16 const*, "
        "long, long, long, long, long, c10::BFloat16 const*, float, int, int)",
        20,
        (512, 1, 1),
        136,
    ),
    "fused_add_rms_norm": Kernel(
        "std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type "
        "vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, "
        "c10::BFloat16*, c10::BFloat16 const*, float, int, int)",
        24,
        (512, 1, 1),
        136,
    ),
    "rotary": Kernel(
        "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, "
        "c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)",
        40,
        (512, 1, 1),
    ),
    "reshape_and_cache": Kernel(
        "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, "
        "(vllm::Fp8KVCacheDataType)1>(__nv_bfloat16 const*, __nv_bfloat16 const*, unsigned "
        "char*, unsigned char*, long const*, long, long, long, long, long, int, int, int, "
        "float const*, float const*)",
        26,
        (512, 1, 1),
    ),
    "splitkv": Kernel(
        "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<256, 64, 64, 4, false, "
        "false, cutlass::bfloat16_t, Flash_kernel_traits<256, 64, 64, 4, cutlass::bfloat16_t> "
        ">, false, false, false, false, true, false, true, false>(flash::Flash_fwd_params)",
        255,
        (128, 1, 1),
        0,
        98_304,
    ),
    # spelled from flash-attention v2 (flash_fwd_kernel.h / flash_fwd_launch_template.h)
    "splitkv_combine": Kernel(
        "void flash::flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<256, 64, 64, 4, "
        "false, false, cutlass::bfloat16_t, Flash_kernel_traits<256, 64, 64, 4, "
        "cutlass::bfloat16_t> >, 4, 3, true>(flash::Flash_fwd_params)",
        64,
        (128, 1, 1),
        8_704,
    ),
    "flash_fwd": Kernel(
        "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<(int)128, (int)128, (int)64, "
        "(int)4, (bool)0, (bool)0, cutlass::bfloat16_t, Flash_kernel_traits<(int)128, "
        "(int)128, (int)64, (int)4, cutlass::bfloat16_t>>, (bool)0, (bool)0, (bool)0, "
        "(bool)0, (bool)0, (bool)1, (bool)0, (bool)0>(flash::Flash_fwd_params)",
        255,
        (128, 1, 1),
        0,
        65_536,
    ),
    # spelled from vllm/csrc/attention/merge_attn_states.cu (cascade attention's LSE merge)
    "merge_attn_states": Kernel(
        "void vllm::merge_attn_states_kernel<__nv_bfloat16, 128u>(__nv_bfloat16*, float*, "
        "__nv_bfloat16 const*, float const*, __nv_bfloat16 const*, float const*, unsigned int, "
        "unsigned int, unsigned int)",
        32,
        (128, 1, 1),
    ),
    "out_copy": Kernel(
        "void at::native::elementwise_kernel<(int)128, (int)4, void at::native::"
        "gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)"
        "::[lambda() (instance 3)]::operator ()() const::[lambda() (instance 12)]::operator ()"
        "() const::[lambda(c10::BFloat16) (instance 1)]>(at::TensorIteratorBase &, const T1 &)"
        "::[lambda(int) (instance 1)]>(int, T3)",
        30,
        (128, 1, 1),
    ),
    "act_and_mul": Kernel(
        "void vllm::act_and_mul_kernel<c10::BFloat16, __nv_bfloat162, &(c10::BFloat16 "
        "vllm::silu_kernel<c10::BFloat16>(c10::BFloat16 const&)), &(__nv_bfloat162 "
        "vllm::packed_silu_kernel<__nv_bfloat162>(__nv_bfloat162 const&)), true, true, false>",
        22,
        (1024, 1, 1),
    ),
    "splitk_reduce": Kernel(
        "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, "
        "__nv_bfloat16, false, float, __nv_bfloat16, __nv_bfloat16, true, true, false, false>("
        "cublasLt::cublasSplitKParams<float>, float const*, __nv_bfloat16 const*, float*, "
        "__nv_bfloat16*, float const*, float const*, __nv_bfloat16 const*, float const*, "
        "__nv_bfloat16*, void*, long, float*, int*, float*, float*, float const*, float const*, "
        "float const*, float const*, float const*)",
        32,
        (512, 1, 1),
        api="cuLaunchKernelEx",
    ),
    "embedding": Kernel(
        "void at::native::(anonymous namespace)::indexSelectSmallIndex<c10::BFloat16, long, "
        "unsigned int, 2, 2, -2>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, "
        "at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::"
        "TensorInfo<long const, unsigned int>, int, int, unsigned int, long)",
        28,
        (128, 1, 1),
    ),
    "fill_long": Kernel(
        "void at::native::vectorized_elementwise_kernel<(int)2, at::native::FillFunctor<long>, "
        "std::array<char *, (unsigned long)1>>(int, T2, T3)",
        16,
        (64, 1, 1),
    ),
    "logits_cast": Kernel(
        "void at::native::vectorized_elementwise_kernel<(int)8, at::native::"
        "bfloat16_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda(float) (instance 1)], "
        "std::array<char *, (unsigned long)2>>(int, T2, T3)",
        24,
        (128, 1, 1),
    ),
    "softmax": Kernel(
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, "
        "c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>("
        "c10::BFloat16*, c10::BFloat16 const*, int)",
        36,
        (1024, 1, 1),
        32,
    ),
    "argmax": Kernel(
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<int, at::native::"
        "ArgMaxOps<int>, unsigned int, long, 4> >(at::native::ReduceOp<int, at::native::"
        "ArgMaxOps<int>, unsigned int, long, 4>)",
        40,
        (32, 16, 1),
        0,
        2_048,
    ),
    "positions_add": Kernel(
        "void at::native::vectorized_elementwise_kernel<(int)2, at::native::CUDAFunctor_add<long>"
        ", std::array<char *, (unsigned long)3>>(int, T2, T3)",
        16,
        (64, 1, 1),
    ),
}

# GEMM variants cuBLASLt picks, per batch size: (kernel, split-K factor or 0).
GEMMS = {
    1: {
        "qkv": ("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_bias_TNT", 4),
        "o_proj": ("nvjet_tst_64x8_64x16_2x1_v_bz_TNT", 0),
        "gate_up": ("nvjet_tst_64x8_64x16_2x4_h_bz_TNT", 0),
        "down": ("nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT", 4),
        "lm_head": ("nvjet_tst_128x8_64x12_2x1_v_bz_splitK_TNT", 2),
        "prefill_attn": ("nvjet_tst_128x96_64x7_4x1_v_bz_bias_TNT", 0),
        "prefill_mlp": ("nvjet_sm90_tst_64x88_64x11_1x4_h_bz_bias_TNT", 0),
    },
    16: {
        "qkv": ("nvjet_sm90_tst_192x8_64x8_4x1_v_bz_splitK_bias_TNT", 2),
        "o_proj": ("nvjet_tst_64x24_64x16_4x1_v_bz_TNT", 0),
        "gate_up": ("nvjet_tst_256x32_64x5_2x1_v_bz_TNT", 0),
        "down": ("nvjet_tst_64x24_64x16_4x1_v_bz_splitK_TNT", 2),
        "lm_head": ("nvjet_sm90_tst_32x64_64x16_1x2_h_bz_splitK_TNN", 2),
        "prefill_attn": ("nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN", 0),
        "prefill_mlp": ("nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_bias_TNN", 0),
    },
}
# Output features of each GEMM (Qwen2.5-7B: hidden 3584, 28 q + 2x4 kv heads of 128,
# intermediate 18944, vocabulary 152064).
GEMM_OUT = {"qkv": 4608, "o_proj": 3584, "gate_up": 37888, "down": 3584, "lm_head": 152064}

# Mean durations in ns: (decode bs1, decode bs16, prefill bs1, prefill bs16).
# The 16 requests share their prompt prefix (the condition for cascade attention), and with
# prefix caching the prefix is computed once: so batch 16 costs little more than batch 1 in
# kernels both runs share. Decode is memory-bound, so per-call times barely move either;
# reshape_and_cache is the exception (5.15x per call, as in the seed traces). The GEMMs
# cuBLASLt picks for batch 16 are other, bigger kernels (seed: 88 ms vs 18 ms).
DURATIONS = {
    "fill_long": (1_400, 1_450, 1_500, 1_600),
    "embedding": (2_600, 2_900, 5_200, 6_500),
    "norm": (3_100, 3_400, 9_000, 11_500),
    "qkv": (14_500, 16_200, 21_000, 300_000),
    "o_proj": (9_800, 11_000, 16_000, 235_000),
    "gate_up": (92_000, 103_000, 160_000, 2_400_000),
    "down": (48_000, 54_000, 82_000, 1_200_000),
    "splitk_reduce": (2_600, 2_900, 2_600, 2_900),
    "rotary": (2_400, 2_900, 6_100, 7_800),
    "reshape_and_cache": (3_060, 15_760, 3_060, 15_760),  # 5.15x per call at batch 16
    "splitkv": (11_800, 7_400, 48_000, 62_000),
    "splitkv_combine": (2_900, 2_900, 3_800, 4_600),
    "out_copy": (2_200, 2_200, 3_300, 4_000),
    "flash_fwd": (9_700, 9_700, 9_700, 9_700),
    "merge_attn_states": (3_300, 3_300, 3_300, 3_300),
    "act_and_mul": (2_900, 3_600, 14_000, 18_000),
    "lm_head": (380_000, 410_000, 380_000, 410_000),
    "lm_head_reduce": (4_100, 4_600, 4_100, 4_600),
    "logits_cast": (2_800, 3_900, 2_800, 3_900),
    "softmax": (7_200, 9_000, 7_200, 9_000),
    "argmax": (6_800, 7_500, 6_800, 7_500),
    "positions_add": (1_500, 1_550, 1_500, 1_550),
}

# Copies and memsets: device-to-device copies per pass (prefill, each decode pass) and
# their total bytes; memsets per pass (step-level, per layer, cascade extra per decode).
D2D_COPIES = {1: (9, 5), 16: (9, 11)}  # 9 + 4*5 = 29; 9 + 4*11 = 53
D2D_BYTES = {1: 81_000_000, 16: 163_000_000}
MEMSETS_PER_STEP, MEMSETS_PER_LAYER = 13, 2  # 5 * (13 + 28*2) = 345
CASCADE_MEMSETS = 21  # per decode pass at batch 16: 345 + 4*21 = 429
