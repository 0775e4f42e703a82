"""Two small demo traces that ship with tracelens: the BS=1 / BS=16 vLLM case.

``bs1`` and ``bs16`` are synthetic nsys exports (written by :mod:`tracelens.synth`, export
schema 3.23.3 as nsys 2025.5 writes it, one NVIDIA H100 80GB HBM3 with 132 SMs) of the same
vLLM-style decode loop of a 28-layer bf16 model (Qwen2.5-7B-like), eager mode: one prefill
pass and four decode passes (NVTX ranges ``prefill``, ``decode_step_1`` ... ``decode_step_4``
and ``model.layers.N`` inside), at batch 1 and at batch 16. They reproduce the shape of the
case in ``KERNEL_NAMES.md`` ("The seed case"), scaled down from 8,955 launches per trace:

- the same number of kernel launches in both (1,949): the graph is the same size;
- at batch 16 the FlashAttention backend silently switches to *cascade attention* in the
  decode passes (16 requests share a 256-token prefix): each layer runs a prefix
  attention (``flash_fwd_kernel``), a suffix attention (``flash_fwd_splitkv_kernel``) and
  ``merge_attn_states_kernel``, in the three slots where batch 1 runs split-KV attention,
  its ``flash_fwd_splitkv_combine_kernel`` and an output copy;
- ``reshape_and_cache_flash_kernel``: 140 calls in both, about 5.15x longer per call at
  batch 16;
- cuBLASLt picks other GEMM kernels for other shapes: 7 ``nvjet`` variants run only at
  batch 1 and 7 others only at batch 16, and the batch-16 ones take about 5x the time;
- device-to-device copies 29 -> 53 (81 MB -> 163 MB) and memsets 345 -> 429;
- every GPU operation has the CUDA API call that launched it (same correlationId).

Kernel names are real ones from public traces (``shared/kernel_names``), except
``merge_attn_states_kernel`` and ``flash_fwd_splitkv_combine_kernel``, which are spelled
from the vLLM and FlashAttention-2 sources. Durations are modelled, with jitter from a
fixed seed, so the files are identical every time they are generated. Regenerate the
shipped files with ``python -c "import tracelens.demo as d; d.regenerate()"`` (give
``regenerate`` a directory to write elsewhere).
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError
from .synth import TraceBuilder

DEMO_NAMES = ("bs1", "bs16")
DEMO_SCHEMA = "3.23.3"
DEMO_DIR = Path(__file__).parent / "data" / "demo"

PID = 48_213
PROCESS_NAME = "python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct"
LAYERS = 28
DECODE_STEPS = 4
PREFILL_TOKENS = 272  # per request: a 256-token shared system prompt + 16 of its own
SEED = 20_250_815


def demo_path(name: str) -> Path:
    """The shipped demo trace ``name`` (one of :data:`DEMO_NAMES`)."""
    if name not in DEMO_NAMES:
        raise UsageError(f"unknown demo {name!r}; choose one of: {', '.join(DEMO_NAMES)}")
    return DEMO_DIR / f"{name}.sqlite"


# -- kernels -----------------------------------------------------------------------------
@dataclass(frozen=True)
class _Kernel:
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


def _nvjet(name: str) -> _Kernel:
    # cuBLASLt launches its kernels through the driver API, 3 warpgroups, TMA + big smem.
    return _Kernel(name, 168, (384, 1, 1), 0, 200_704, api="cuLaunchKernelEx")


K = {
    "rms_norm": _Kernel(
        "void vllm::rms_norm_kernel<c10::BFloat16, 8, 2>(c10::BFloat16*, c10::BFloat16 const*, "
        "long, long, long, long, long, c10::BFloat16 const*, float, int, int)",
        20,
        (512, 1, 1),
        136,
    ),
    "fused_add_rms_norm": _Kernel(
        "std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type "
        "vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, "
        "c10::BFloat16*, c10::BFloat16 const*, float, int, int)",
        24,
        (512, 1, 1),
        136,
    ),
    "rotary": _Kernel(
        "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, "
        "c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)",
        40,
        (512, 1, 1),
    ),
    "reshape_and_cache": _Kernel(
        "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, "
        "(vllm::Fp8KVCacheDataType)1>(__nv_bfloat16 const*, __nv_bfloat16 const*, unsigned "
        "char*, unsigned char*, long const*, long, long, long, long, long, int, int, int, "
        "float const*, float const*)",
        26,
        (512, 1, 1),
    ),
    "splitkv": _Kernel(
        "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<256, 64, 64, 4, false, "
        "false, cutlass::bfloat16_t, Flash_kernel_traits<256, 64, 64, 4, cutlass::bfloat16_t> "
        ">, false, false, false, false, true, false, true, false>(flash::Flash_fwd_params)",
        255,
        (128, 1, 1),
        0,
        98_304,
    ),
    # spelled from flash-attention v2 (flash_fwd_kernel.h / flash_fwd_launch_template.h)
    "splitkv_combine": _Kernel(
        "void flash::flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<256, 64, 64, 4, "
        "false, false, cutlass::bfloat16_t, Flash_kernel_traits<256, 64, 64, 4, "
        "cutlass::bfloat16_t> >, 4, 3, true>(flash::Flash_fwd_params)",
        64,
        (128, 1, 1),
        8_704,
    ),
    "flash_fwd": _Kernel(
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
    "merge_attn_states": _Kernel(
        "void vllm::merge_attn_states_kernel<__nv_bfloat16, 128u>(__nv_bfloat16*, float*, "
        "__nv_bfloat16 const*, float const*, __nv_bfloat16 const*, float const*, unsigned int, "
        "unsigned int, unsigned int)",
        32,
        (128, 1, 1),
    ),
    "out_copy": _Kernel(
        "void at::native::elementwise_kernel<(int)128, (int)4, void at::native::"
        "gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)"
        "::[lambda() (instance 3)]::operator ()() const::[lambda() (instance 12)]::operator ()"
        "() const::[lambda(c10::BFloat16) (instance 1)]>(at::TensorIteratorBase &, const T1 &)"
        "::[lambda(int) (instance 1)]>(int, T3)",
        30,
        (128, 1, 1),
    ),
    "act_and_mul": _Kernel(
        "void vllm::act_and_mul_kernel<c10::BFloat16, __nv_bfloat162, &(c10::BFloat16 "
        "vllm::silu_kernel<c10::BFloat16>(c10::BFloat16 const&)), &(__nv_bfloat162 "
        "vllm::packed_silu_kernel<__nv_bfloat162>(__nv_bfloat162 const&)), true, true, false>",
        22,
        (1024, 1, 1),
    ),
    "splitk_reduce": _Kernel(
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
    "embedding": _Kernel(
        "void at::native::(anonymous namespace)::indexSelectSmallIndex<c10::BFloat16, long, "
        "unsigned int, 2, 2, -2>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, "
        "at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::"
        "TensorInfo<long const, unsigned int>, int, int, unsigned int, long)",
        28,
        (128, 1, 1),
    ),
    "fill_long": _Kernel(
        "void at::native::vectorized_elementwise_kernel<(int)2, at::native::FillFunctor<long>, "
        "std::array<char *, (unsigned long)1>>(int, T2, T3)",
        16,
        (64, 1, 1),
    ),
    "logits_cast": _Kernel(
        "void at::native::vectorized_elementwise_kernel<(int)8, at::native::"
        "bfloat16_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda(float) (instance 1)], "
        "std::array<char *, (unsigned long)2>>(int, T2, T3)",
        24,
        (128, 1, 1),
    ),
    "softmax": _Kernel(
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, "
        "c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>("
        "c10::BFloat16*, c10::BFloat16 const*, int)",
        36,
        (1024, 1, 1),
        32,
    ),
    "argmax": _Kernel(
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<int, at::native::"
        "ArgMaxOps<int>, unsigned int, long, 4> >(at::native::ReduceOp<int, at::native::"
        "ArgMaxOps<int>, unsigned int, long, 4>)",
        40,
        (32, 16, 1),
        0,
        2_048,
    ),
    "positions_add": _Kernel(
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


# -- the simulated run -------------------------------------------------------------------
class _Run:
    """One CPU thread launching onto one stream: API calls on the CPU timeline, GPU work
    in stream order (a kernel starts after its launch and after the previous one ends)."""

    def __init__(self, b: TraceBuilder, rng: random.Random, t0: int) -> None:
        self.b, self.rng = b, rng
        self.cpu = t0
        self.gpu = t0

    def _api(self, name: str, event_class: int) -> tuple[int, int]:
        rng = self.rng
        self.cpu += rng.randint(6_000, 14_000)  # Python between two CUDA calls (eager mode)
        start = self.cpu
        end = start + rng.randint(2_800, 5_600)
        cid = self.b.runtime(name, start=start, end=end, event_class=event_class)
        self.cpu = end
        return cid, start

    def _gpu_slot(self, api_start: int, duration: int) -> tuple[int, int]:
        start = max(
            self.gpu + self.rng.randint(700, 1_500), api_start + self.rng.randint(2_400, 4_200)
        )
        self.gpu = start + duration
        return start, self.gpu

    def _jitter(self, mean: int) -> int:
        return max(500, round(mean * min(1.25, max(0.85, self.rng.gauss(1.0, 0.03)))))

    def kernel(
        self, key: str, mean: int, grid: tuple[int, int, int], kernel: _Kernel | None = None
    ) -> None:
        k = kernel or K[key]
        cid, api_start = self._api(k.api, 0 if k.api.startswith("cuda") else 1)  # 1: driver API
        start, end = self._gpu_slot(api_start, self._jitter(mean))
        cx, cy, cz = k.cluster
        self.b.kernel(
            k.name,
            start=start,
            end=end,
            correlation_id=cid,
            grid=grid,
            block=k.block,
            registers=k.registers,
            static_shared=k.static_shared,
            dynamic_shared=k.dynamic_shared,
            greenContextId=0,
            clusterX=cx,
            clusterY=cy,
            clusterZ=cz,
        )

    def memcpy(self, kind: str, nbytes: int) -> None:
        cid, api_start = self._api("cudaMemcpyAsync_v3020", 0)
        gbps = {"HtoD": 22, "DtoH": 22, "DtoD": 1_300}[kind]  # bytes per ns
        start, end = self._gpu_slot(api_start, 1_200 + nbytes // gbps)
        host = "pinned"
        self.b.memcpy(
            kind,
            nbytes,
            start=start,
            end=end,
            correlation_id=cid,
            src_kind=host if kind == "HtoD" else "device",
            dst_kind=host if kind == "DtoH" else "device",
        )

    def memset(self, nbytes: int) -> None:
        cid, api_start = self._api("cudaMemsetAsync_v3020", 0)
        start, end = self._gpu_slot(api_start, 1_100 + nbytes // 2_000)
        self.b.memset(nbytes, start=start, end=end, correlation_id=cid)

    def synchronize(self) -> None:
        self.cpu += self.rng.randint(3_000, 6_000)
        start = self.cpu
        end = max(start + 2_000, self.gpu + self.rng.randint(2_000, 4_000))
        self.b.runtime("cudaStreamSynchronize_v3020", start=start, end=end)
        self.cpu = end


def _split(total: int, parts: int, rng: random.Random) -> list[int]:
    """``parts`` sizes (multiples of 512 but the last) that add up to ``total`` exactly."""
    weights = [rng.uniform(0.4, 1.6) for _ in range(parts)]
    scale = total / sum(weights)
    sizes = [int(w * scale) // 512 * 512 for w in weights[:-1]]
    return [*sizes, total - sum(sizes)]


def _gemm_grid(bs: int, which: str, tokens: int) -> tuple[int, int, int]:
    name, split = GEMMS[bs][which]
    m = re.match(r"^nvjet_(?:sm\d+_)?[a-z]+_(\d+)x(\d+)_\d+x\d+_(\d+)x(\d+)_", name)
    assert m, name
    tile_m, tile_n, cluster_x = int(m.group(1)), int(m.group(2)), int(m.group(3))
    out = GEMM_OUT.get(which, 3584)
    gx = math.ceil(out / tile_m)
    gx = math.ceil(gx / cluster_x) * cluster_x
    return (gx, math.ceil(tokens / tile_n), split or 1)


def _build(bs: int) -> TraceBuilder:
    rng = random.Random(SEED * 100 + bs)
    b = TraceBuilder(DEMO_SCHEMA)
    b.process(PID, PROCESS_NAME)
    b.thread("python3")
    b.gpu(0, "NVIDIA H100 80GB HBM3", sm_count=132, total_memory=85_520_809_984)
    b.add_row("TARGET_INFO_CUDA_DEVICE", gpuId=0, cudaId=0, pid=PID)
    b.metadata("TRACELENS_DEMO", f"vLLM-style decode loop, batch size {bs}")
    run = _Run(b, rng, t0=2_000_000_000)

    d2d_prefill, d2d_decode = D2D_COPIES[bs]
    d2d_sizes = _split(D2D_BYTES[bs], d2d_prefill + DECODE_STEPS * d2d_decode, rng)

    def gemm(which: str, col: int, tokens: int, gemm_key: str | None = None) -> None:
        name, split = GEMMS[bs][which]
        run.kernel(
            which, DURATIONS[gemm_key or which][col], _gemm_grid(bs, which, tokens), _nvjet(name)
        )
        if split:
            reduce_key = "lm_head_reduce" if which == "lm_head" else "splitk_reduce"
            out = GEMM_OUT[which]
            run.kernel(
                "splitk_reduce", DURATIONS[reduce_key][col], (math.ceil(out / 512), tokens, 1)
            )

    for step in range(DECODE_STEPS + 1):
        prefill = step == 0
        tokens = bs * PREFILL_TOKENS if prefill else bs
        col = (2 if prefill else 0) + (1 if bs == 16 else 0)
        cascade = bs == 16 and not prefill
        step_start = run.cpu
        # input preparation: memsets, host-to-device metadata, persistent-buffer copies
        for _ in range(MEMSETS_PER_STEP + (CASCADE_MEMSETS if cascade else 0)):
            run.memset(rng.choice((4_096, 8_192, 65_536, 262_144)))
        for per_token in (8, 8, 8, 4, 4, 4 * 64):  # ids, positions, slots, lens, block table
            run.memcpy("HtoD", max(per_token * tokens, 64))
        for _ in range(d2d_prefill if prefill else d2d_decode):
            run.memcpy("DtoD", d2d_sizes.pop(0))
        run.kernel("fill_long", DURATIONS["fill_long"][col], (1, 1, 1))
        run.kernel("embedding", DURATIONS["embedding"][col], (max(1, tokens * 28 // 64), 1, 1))

        for layer in range(LAYERS):
            layer_start = run.cpu
            norm = "rms_norm" if layer == 0 else "fused_add_rms_norm"
            run.kernel(norm, DURATIONS["norm"][col], (tokens, 1, 1))
            gemm("prefill_attn" if prefill else "qkv", col, tokens, "qkv")
            run.kernel("rotary", DURATIONS["rotary"][col], (tokens, 1, 1))
            for _ in range(MEMSETS_PER_LAYER):
                run.memset(tokens * 28 * 4 * 2)
            run.kernel("reshape_and_cache", DURATIONS["reshape_and_cache"][col], (tokens, 1, 1))
            if cascade:  # shared prefix once, suffixes per request, then the LSE merge
                run.kernel("flash_fwd", DURATIONS["flash_fwd"][col], (1, 1, 28))
                run.kernel("splitkv", DURATIONS["splitkv"][col], (1, bs, 4))
                run.kernel("merge_attn_states", DURATIONS["merge_attn_states"][col], (56, 1, 1))
            else:
                grid = (1, 8, 4) if not prefill else (math.ceil(PREFILL_TOKENS / 64), bs, 28)
                run.kernel("splitkv", DURATIONS["splitkv"][col], grid)
                run.kernel(
                    "splitkv_combine", DURATIONS["splitkv_combine"][col], (max(1, tokens * 7), 1, 1)
                )
                run.kernel("out_copy", DURATIONS["out_copy"][col], (max(2, tokens * 7 // 4), 1, 1))
            gemm("prefill_attn" if prefill else "o_proj", col, tokens, "o_proj")
            run.kernel("fused_add_rms_norm", DURATIONS["norm"][col], (tokens, 1, 1))
            gemm("prefill_mlp" if prefill else "gate_up", col, tokens, "gate_up")
            run.kernel("act_and_mul", DURATIONS["act_and_mul"][col], (tokens, 1, 1))
            gemm("prefill_mlp" if prefill else "down", col, tokens, "down")
            b.nvtx_range(f"model.layers.{layer}", start=layer_start, end=run.cpu, registered=True)

        # final norm, logits of the last token of each request, sampling
        run.kernel("fused_add_rms_norm", DURATIONS["norm"][col], (bs, 1, 1))
        gemm("lm_head", col, bs)
        run.kernel(
            "logits_cast", DURATIONS["logits_cast"][col], (max(1, bs * 152_064 // 4_096), 1, 1)
        )
        run.kernel("softmax", DURATIONS["softmax"][col], (bs, 1, 1))
        run.kernel("argmax", DURATIONS["argmax"][col], (bs, 1, 1))
        run.kernel("positions_add", DURATIONS["positions_add"][col], (1, 1, 1))
        run.memcpy("DtoH", 8 * bs)  # sampled token ids
        run.synchronize()
        b.nvtx_range("prefill" if prefill else f"decode_step_{step}", start=step_start, end=run.cpu)
        run.cpu += rng.randint(150_000, 250_000)  # scheduler work between passes
    assert not d2d_sizes
    return b


def build_demo(name: str, dest_path: str | Path) -> Path:
    """Write demo trace ``name`` to ``dest_path`` (identical to the shipped file)."""
    demo_path(name)  # validates the name
    bs = int(name.removeprefix("bs"))
    return _build(bs).write(dest_path)


def regenerate(out_dir: str | Path = DEMO_DIR) -> list[Path]:
    """Write every demo trace into ``out_dir`` (default: the shipped files' directory) and
    return their paths. A function, not a second command line: run it as
    ``python -c "import tracelens.demo as d; d.regenerate()"``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [build_demo(name, out / f"{name}.sqlite") for name in DEMO_NAMES]
