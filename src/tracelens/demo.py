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

from .demo_workload import (
    CASCADE_MEMSETS,
    D2D_BYTES,
    D2D_COPIES,
    DURATIONS,
    GEMM_OUT,
    GEMMS,
    MEMSETS_PER_LAYER,
    MEMSETS_PER_STEP,
    K,
    Kernel,
    nvjet,
)
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
        self, key: str, mean: int, grid: tuple[int, int, int], kernel: Kernel | None = None
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


@dataclass(frozen=True)
class _Pass:
    """One forward pass at batch ``bs``: the prefill (step 0) or decode step ``step``."""

    bs: int
    step: int

    @property
    def prefill(self) -> bool:
        return self.step == 0

    @property
    def tokens(self) -> int:
        return self.bs * PREFILL_TOKENS if self.prefill else self.bs

    @property
    def col(self) -> int:
        """Its column of :data:`DURATIONS`."""
        return (2 if self.prefill else 0) + (1 if self.bs == 16 else 0)

    @property
    def cascade(self) -> bool:
        """Whether the attention backend runs cascade attention (batch 16 decoding)."""
        return self.bs == 16 and not self.prefill


def _gemm(run: _Run, p: _Pass, which: str, tokens: int, gemm_key: str | None = None) -> None:
    """cuBLASLt's GEMM ``which`` over ``tokens`` rows (and its split-K reduction when it
    splits)."""
    name, split = GEMMS[p.bs][which]
    grid = _gemm_grid(p.bs, which, tokens)
    run.kernel(which, DURATIONS[gemm_key or which][p.col], grid, nvjet(name))
    if split:
        reduce_key = "lm_head_reduce" if which == "lm_head" else "splitk_reduce"
        out = GEMM_OUT[which]
        run.kernel("splitk_reduce", DURATIONS[reduce_key][p.col], (math.ceil(out / 512), tokens, 1))


def _inputs(run: _Run, p: _Pass, d2d_sizes: list[int]) -> None:
    """Input preparation: memsets, host-to-device metadata, persistent-buffer copies (the
    next of ``d2d_sizes``), then the embedding."""
    col, tokens = p.col, p.tokens
    for _ in range(MEMSETS_PER_STEP + (CASCADE_MEMSETS if p.cascade else 0)):
        run.memset(run.rng.choice((4_096, 8_192, 65_536, 262_144)))
    for per_token in (8, 8, 8, 4, 4, 4 * 64):  # ids, positions, slots, lens, block table
        run.memcpy("HtoD", max(per_token * tokens, 64))
    d2d_prefill, d2d_decode = D2D_COPIES[p.bs]
    for _ in range(d2d_prefill if p.prefill else d2d_decode):
        run.memcpy("DtoD", d2d_sizes.pop(0))
    run.kernel("fill_long", DURATIONS["fill_long"][col], (1, 1, 1))
    run.kernel("embedding", DURATIONS["embedding"][col], (max(1, tokens * 28 // 64), 1, 1))


def _attention(run: _Run, p: _Pass) -> None:
    """The attention of one layer: cascade (shared prefix once, suffixes per request, then
    the LSE merge) or split-KV with its combine and output copy."""
    col, tokens = p.col, p.tokens
    if p.cascade:
        run.kernel("flash_fwd", DURATIONS["flash_fwd"][col], (1, 1, 28))
        run.kernel("splitkv", DURATIONS["splitkv"][col], (1, p.bs, 4))
        run.kernel("merge_attn_states", DURATIONS["merge_attn_states"][col], (56, 1, 1))
    else:
        grid = (1, 8, 4) if not p.prefill else (math.ceil(PREFILL_TOKENS / 64), p.bs, 28)
        run.kernel("splitkv", DURATIONS["splitkv"][col], grid)
        run.kernel("splitkv_combine", DURATIONS["splitkv_combine"][col], (max(1, tokens * 7), 1, 1))
        run.kernel("out_copy", DURATIONS["out_copy"][col], (max(2, tokens * 7 // 4), 1, 1))


def _layer(run: _Run, p: _Pass, layer: int) -> None:
    """Decoder layer ``layer``, inside its NVTX range ``model.layers.N``."""
    col, tokens = p.col, p.tokens
    layer_start = run.cpu
    norm = "rms_norm" if layer == 0 else "fused_add_rms_norm"
    run.kernel(norm, DURATIONS["norm"][col], (tokens, 1, 1))
    _gemm(run, p, "prefill_attn" if p.prefill else "qkv", tokens, "qkv")
    run.kernel("rotary", DURATIONS["rotary"][col], (tokens, 1, 1))
    for _ in range(MEMSETS_PER_LAYER):
        run.memset(tokens * 28 * 4 * 2)
    run.kernel("reshape_and_cache", DURATIONS["reshape_and_cache"][col], (tokens, 1, 1))
    _attention(run, p)
    _gemm(run, p, "prefill_attn" if p.prefill else "o_proj", tokens, "o_proj")
    run.kernel("fused_add_rms_norm", DURATIONS["norm"][col], (tokens, 1, 1))
    _gemm(run, p, "prefill_mlp" if p.prefill else "gate_up", tokens, "gate_up")
    run.kernel("act_and_mul", DURATIONS["act_and_mul"][col], (tokens, 1, 1))
    _gemm(run, p, "prefill_mlp" if p.prefill else "down", tokens, "down")
    run.b.nvtx_range(f"model.layers.{layer}", start=layer_start, end=run.cpu, registered=True)


def _sampling(run: _Run, p: _Pass) -> None:
    """Final norm, logits of the last token of each request, sampling, and the sampled
    token ids back to the host."""
    col, bs = p.col, p.bs
    run.kernel("fused_add_rms_norm", DURATIONS["norm"][col], (bs, 1, 1))
    _gemm(run, p, "lm_head", bs)  # the last token of each request
    run.kernel("logits_cast", DURATIONS["logits_cast"][col], (max(1, bs * 152_064 // 4_096), 1, 1))
    run.kernel("softmax", DURATIONS["softmax"][col], (bs, 1, 1))
    run.kernel("argmax", DURATIONS["argmax"][col], (bs, 1, 1))
    run.kernel("positions_add", DURATIONS["positions_add"][col], (1, 1, 1))
    run.memcpy("DtoH", 8 * bs)  # sampled token ids
    run.synchronize()


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
    for step in range(DECODE_STEPS + 1):
        p = _Pass(bs, step)
        step_start = run.cpu
        _inputs(run, p, d2d_sizes)
        for layer in range(LAYERS):
            _layer(run, p, layer)
        _sampling(run, p)
        b.nvtx_range(
            "prefill" if p.prefill else f"decode_step_{step}", start=step_start, end=run.cpu
        )
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
