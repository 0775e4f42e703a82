"""Generate a large, realistic Nsight Systems SQLite export for benchmarking.

    python bench/make_trace.py /tmp/bench/llm_5m.sqlite [--kernels 5000000] [--names 300]
                               [--seed 1] [--devices 4] [--schema 3.0.0]
                               [--loop K [--switch-step S]]

The tables are created with the real ``CREATE`` statements nsys writes (from
``../shared/schema/ddl/nsys_export_schema_<schema>.sql``, or ``src/tracelens/ddl/`` when the
shared directory is absent); tables the base DDL lacks but the trace needs (the memset table is
created lazily by nsys) come from the ``_full`` DDL of the same schema version.

What is in the file (an LLM job on ``--devices`` GPUs, one process per GPU):

- ``CUPTI_ACTIVITY_KIND_KERNEL``: ``--kernels`` rows over ``--names`` distinct kernels. Names are
  real ones from ``../shared/kernel_names/real_kernel_names.tsv`` when present (two thirds at
  most), topped up with generated LLM-style names (nvjet/CUTLASS GEMMs, flash attention,
  elementwise, norms, rotary, MoE, NCCL) with long demangled template signatures. Each name has
  a shortName and a mangledName StringId, one to three launch configurations (grid, block,
  registers, shared memory), a Zipf-like launch frequency and a category-dependent duration.
  Every device has a compute stream, a side stream and an NCCL stream; kernels never overlap
  on a stream. By default the launches are random picks by weight (after a warm-up that
  launches every name once), with a millisecond host pause every 4,096 launches: no step
  structure (``tracelens steps`` finds none). ``--loop K`` makes a periodic job instead:
  every device repeats one loop of K launches (K picks by weight, the same loop on every
  device; no warm-up, so only the loop's names launch), each step ending with all the
  device's streams drained and a 2-5 ms host pause; durations keep their jitter (±15%,
  0.5% stragglers at 2-5x). ``--switch-step S``: from step S on, one kernel of the loop
  (the rarest attention kernel in it, else the rarest kernel) is replaced everywhere in the
  loop by a kernel outside it, as a serving engine switching to cascade attention does.
- ``CUPTI_ACTIVITY_KIND_RUNTIME``: one launch call per kernel, memcpy and memset, linked by
  ``correlationId`` (unique per process), a few microseconds before the GPU work starts.
- ``CUPTI_ACTIVITY_KIND_MEMCPY`` (1 per 250 kernels) and ``CUPTI_ACTIVITY_KIND_MEMSET``
  (1 per 500 kernels), ENUM tables, TARGET_INFO_GPU / _CUDA_STREAM / _CUDA_NULL_STREAM (or _CUDA_CONTEXT_INFO) /
  _SESSION_START_TIME,
  PROCESSES, ThreadNames, StringIds and the metadata table (EXPORT_META_DATA for schema <= 3.0,
  META_DATA_EXPORT after) with EXPORT_SCHEMA_VERSION.

The output is deterministic for a given seed, arguments and names file (byte-identical);
without ``--loop`` it is the same file as before the option existed.
Writing uses ``journal_mode=OFF`` and ``synchronous=OFF``: the file is ours and is either
complete or deleted.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import sqlite3
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TRACELENS_SHARED", REPO.parent / "shared"))
DDL_DIRS = (SHARED / "schema" / "ddl", REPO / "src" / "tracelens" / "ddl")
NAMES_FILE = SHARED / "kernel_names" / "real_kernel_names.tsv"

# nsys release that wrote each export schema version (../shared/schema/NSYS_SQLITE.md).
NSYS_VERSION = {
    "2.9.1": "2022.2.1.31",
    "3.0.0": "2022.4.2.1",
    "3.4.0": "2023.3.1.92",
    "3.13.2": "2024.5.1.113",
    "3.23.3": "2025.5.1.121",
    "3.24.18": "2026.1.1.204",
    "3.25.0": "2026.2.1.210",
}

BATCH = 200_000
SESSION_UTC_NS = 1_735_689_600_000_000_000  # 2025-01-01T00:00:00Z, fixed for determinism
T0_NS = 1_250_000_000  # first GPU activity, ns from session start

# ---------------------------------------------------------------------------------------------
# DDL


def ddl_file(schema: str, suffix: str = "") -> Path | None:
    for d in DDL_DIRS:
        p = d / f"nsys_export_schema_{schema}{suffix}.sql"
        if p.is_file():
            return p
    return None


def create_statements(path: Path) -> dict[str, str]:
    """Table name -> its CREATE statement, exactly as the DDL file has it."""
    mem = sqlite3.connect(":memory:")
    mem.executescript(path.read_text(encoding="utf-8"))
    rows = mem.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY rowid")
    out = dict(rows.fetchall())
    mem.close()
    return out


NEEDED = ("StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME")
# Written when the schema version has a CREATE for them (else left out, as nsys does when
# nothing of the kind was captured).
OPTIONAL = ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")


def load_ddl(schema: str) -> tuple[Path, dict[str, str]]:
    base = ddl_file(schema)
    if base is None:
        looked = ", ".join(str(d) for d in DDL_DIRS)
        sys.exit(f"make_trace: no nsys_export_schema_{schema}.sql in {looked}")
    tables = create_statements(base)
    full = ddl_file(schema, "_full")
    extra = create_statements(full) if full else {}
    for name in NEEDED + OPTIONAL:
        if name not in tables and name in extra:
            tables[name] = extra[name]
    missing = [n for n in NEEDED if n not in tables]
    if missing:
        sys.exit(f"make_trace: schema {schema} has no {', '.join(missing)}")
    return base, tables


class Table:
    """Inserts rows given in a fixed column order into whatever columns the real table has.

    Columns of ``cols`` the table lacks are dropped; NOT NULL columns of the table that
    ``cols`` does not know get 0 (a literal in the statement, no per-row cost).
    """

    def __init__(self, con: sqlite3.Connection, table: str, cols: tuple[str, ...]) -> None:
        info = con.execute(f'SELECT name, "notnull", dflt_value FROM pragma_table_info("{table}")')
        info = info.fetchall()
        present = [c for c, _, _ in info]
        self.keep = [i for i, c in enumerate(cols) if c in present]
        names = [cols[i] for i in self.keep]
        values = ["?"] * len(names)
        for c, notnull, default in info:
            if c not in cols and notnull and default is None:
                names.append(c)
                values.append("0")
        quoted = ", ".join(f'"{n}"' for n in names)
        self.sql = f'INSERT INTO "{table}" ({quoted}) VALUES ({", ".join(values)})'
        self.all = len(self.keep) == len(cols)
        self.con = con
        self.count = 0

    def insert(self, rows: list[tuple]) -> None:
        if not self.all:
            keep = self.keep
            rows = [tuple(r[i] for i in keep) for r in rows]
        self.con.executemany(self.sql, rows)
        self.count += len(rows)


def insert_dicts(con: sqlite3.Connection, table: str, rows: list[dict]) -> None:
    if not rows:
        return
    cols = tuple(rows[0])
    Table(con, table, cols).insert([tuple(r[c] for c in cols) for r in rows])


# ---------------------------------------------------------------------------------------------
# Kernel names


def real_names(path: Path) -> list[str]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#") or "\t" not in line:
            continue
        name = line.split("\t", 1)[1].strip()
        # Copy/set labels are not kernels.
        if name and not name.startswith(("Memcpy", "Memset", "[CUDA")):
            out.append(name)
    return list(dict.fromkeys(out))


_DT = ["cutlass::bfloat16_t", "cutlass::half_t", "cutlass::float_e4m3_t"]
_TORCH_DT = ["c10::BFloat16", "c10::Half", "float"]
_FUNCTORS = [
    "CUDAFunctor_add",
    "MulFunctor",
    "FillFunctor",
    "AbsFunctor",
    "CUDAFunctorOnSelf_add",
    "DivFunctor",
    "where_kernel_impl",
    "silu_kernel",
    "gelu_kernel",
]


def synthetic_name(rng: random.Random) -> str:
    """One plausible LLM-workload kernel name (demangled form)."""
    kind = rng.choice(
        ["nvjet", "nvjet", "cutlass3", "flash", "flash", "elem", "elem", "elem", "norm", "nccl"]
        + ["rotary", "moe", "reduce", "cache", "act", "sampling"]
    )
    r = rng.randrange
    if kind == "nvjet":
        arch = rng.choice(["", "sm90_", "sm100_"])
        return (
            f"nvjet_{arch}{rng.choice(['tst', 'hsh', 'qqtst', 'sss', 'tss'])}_"
            f"{rng.choice([64, 128, 192, 256])}x{rng.choice([8, 16, 64, 128, 192, 256])}_"
            f"{rng.choice([64, 128])}x{r(3, 9)}_{rng.choice(['1x1', '2x1', '1x2'])}_"
            f"{rng.choice(['v', 'h'])}_{rng.choice(['bz', 'badd', 'bz_bias'])}"
            f"{rng.choice(['', '_coopA', '_coopB', '_splitK', '_2cta'])}_"
            f"{rng.choice(['TNN', 'TNT', 'NNT', 'NTN'])}"
        )
    if kind == "cutlass3":
        m, n, k = rng.choice([64, 128, 256]), rng.choice([64, 128, 256]), rng.choice([32, 64, 128])
        dt = rng.choice(_DT)
        return (
            "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, "
            f"int, int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::"
            f"MainloopSm90TmaGmmaWarpSpecializedCooperative<{r(3, 8)}, cute::tuple<cute::C<2>, "
            f"cute::C<1>, cute::C<1>>, cutlass::gemm::KernelTmaWarpSpecializedCooperative>, "
            f"cute::tuple<cute::C<{m}>, cute::C<{n}>, cute::C<{k}>>, {dt}, cute::tuple<long, "
            f"cute::C<1>, long>, {dt}, cute::tuple<long, cute::C<1>, long>, cute::TiledMMA<"
            f"cute::MMA_Atom<cute::SM90_64x{n}x16_F32BF16BF16_SS<(cute::GMMA::Major)0, "
            f"(cute::GMMA::Major)0, (cute::GMMA::ScaleIn)1, (cute::GMMA::ScaleIn)1>>>, "
            f"cute::SM90_TMA_LOAD, void, cute::identity>, cutlass::epilogue::collective::"
            f"CollectiveEpilogue<{r(1, 4)}>, void, void>>(T1::Params)"
        )
    if kind == "flash":
        hd, bm, bn = rng.choice([64, 128, 256]), rng.choice([64, 128]), rng.choice([64, 128, 176])
        fn = rng.choice(["flash_fwd_kernel", "flash_fwd_splitkv_kernel", "flash_bwd_dq_dk_dv_loop"])
        return (
            f"void flash::{fn}<Flash_fwd_kernel_traits<(int){hd}, (int){bm}, (int){bn}, (int)4, "
            f"(bool){r(2)}, (bool){r(2)}, cutlass::bfloat16_t, Flash_kernel_traits<(int){hd}, "
            f"(int){bm}, (int){bn}, (int)4, cutlass::bfloat16_t>>, (bool){r(2)}, (bool){r(2)}, "
            f"(bool)0, (bool)0, (bool){r(2)}, (bool)1>(Flash_fwd_params)"
        )
    if kind == "elem":
        f, dt, v = rng.choice(_FUNCTORS), rng.choice(_TORCH_DT), rng.choice([2, 4, 8])
        return (
            f"void at::native::vectorized_elementwise_kernel<(int){v}, at::native::{f}<{dt}>, "
            f"std::array<char *, (unsigned long){r(2, 4)}>>(int, T2, T3)"
        )
    if kind == "norm":
        fn = rng.choice(["rms_norm_kernel", "fused_add_rms_norm_kernel", "layer_norm_kernel"])
        return (
            f"void vllm::{fn}<{rng.choice(_TORCH_DT)}, (int){rng.choice([1, 2, 4, 8])}>"
            f"(T1 *, T1 *, const T1 *, float, int, int)"
        )
    if kind == "nccl":
        op = rng.choice(["AllReduce", "AllGather", "ReduceScatter", "Broadcast", "SendRecv"])
        return (
            f"ncclDevKernel_{op}_{rng.choice(['Sum_bf16', 'Sum_f32', 'Sum_f16'])}_"
            f"{rng.choice(['RING', 'TREE', 'NVLS'])}_{rng.choice(['LL', 'LL128', 'SIMPLE'])}"
            f"(ncclDevKernelArgsStorage<(unsigned long){rng.choice([4096, 8192])}>)"
        )
    if kind == "rotary":
        return (
            f"void vllm::rotary_embedding_kernel<{rng.choice(_TORCH_DT)}, (bool){r(2)}>(const "
            f"long *, T1 *, T1 *, const T1 *, int, long, long, int, int, int)"
        )
    if kind == "moe":
        return rng.choice(
            [
                f"void vllm::moe::topkGatingSoftmax<(int){rng.choice([4, 8, 16])}, (int){r(64, 257)}, "
                f"(int){rng.choice([4, 8])}, (int)16, int>(const float *, const bool *, float *, "
                f"int, T5 *, int *, int, int, int)",
                f"void vllm::moe::moe_align_block_size_kernel<int>(const T1 *, int *, int *, int *, "
                f"int, int, int, unsigned long, int *, int)<{r(1000)}>",
                f"fused_moe_kernel_{r(10000):04d}",
            ]
        )
    if kind == "reduce":
        return (
            f"void at::native::reduce_kernel<(int){rng.choice([128, 256, 512])}, (int){r(1, 5)}, "
            f"at::native::ReduceOp<{rng.choice(_TORCH_DT)}, at::native::func_wrapper_t<float, "
            f"at::native::MaxNanFunctor<float>>, unsigned int, float, (int){r(1, 5)}>>"
            f"(T3)"
        )
    if kind == "cache":
        return (
            f"void vllm::reshape_and_cache_flash_kernel<{rng.choice(_TORCH_DT)}, "
            f"{rng.choice(_TORCH_DT)}, (vllm::Fp8KVCacheDataType){r(3)}>(const T1 *, const T1 *, "
            f"T2 *, T2 *, const long *, long, long, long, long, int, int, int, const float *, "
            f"const float *)"
        )
    if kind == "act":
        return (
            f"void vllm::act_and_mul_kernel<{rng.choice(_TORCH_DT)}, &vllm::silu_kernel<"
            f"{rng.choice(_TORCH_DT)}>, (bool){r(2)}>(T1 *, const T1 *, int)"
        )
    return (
        f"void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<"
        f"float, (int){rng.choice([2, 4])}, at::native::templates::cuda::uniform_and_transform<"
        f"float, float, at::native::(anonymous namespace)::exponential_kernel>>(long, "
        f"at::PhiloxCudaState, T3, T4)"
    )


def short_name(name: str) -> str:
    """nsys-style base name: no return type, arguments, template arguments or namespaces."""
    s = name[5:] if name.startswith("void ") else name
    depth, out = 0, []
    for ch in s:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif ch == "(" and depth == 0:
            break
        elif depth == 0:
            out.append(ch)
    base = "".join(out).strip()
    return base.rsplit("::", 1)[-1] or name[:64]


def mangled_name(name: str, short: str) -> str:
    if name.startswith("_Z") or name == short:
        return name  # extern "C" kernels (nvjet, NCCL) are not mangled
    s = name[5:] if name.startswith("void ") else name
    head = s.split("<", 1)[0].split("(", 1)[0]
    parts = [p for p in head.split("::") if p]
    digest = hashlib.sha1(name.encode()).hexdigest()[:10]
    return "_ZN" + "".join(f"{len(p)}{p}" for p in parts) + f"I{digest}EEvT_"


CATEGORIES = (  # (category, pattern, (min mean ns, max mean ns), launch weight multiplier)
    (
        "nccl",
        re.compile(r"nccl|all_?reduce|allgather|cross_device", re.I),
        (15_000, 2_500_000),
        0.6,
    ),
    (
        "gemm",
        re.compile(r"gemm|nvjet|cutlass|xmma|matmul|_mm\b|splitK|wgrad|dgrad|fprop", re.I),
        (8_000, 600_000),
        1.5,
    ),
    (
        "attention",
        re.compile(r"flash|fmha|attn|attention|prefill|decode|paged|merge", re.I),
        (20_000, 1_500_000),
        1.0,
    ),
    ("norm", re.compile(r"norm", re.I), (3_000, 30_000), 2.0),
    (
        "reduce",
        re.compile(r"reduce|softmax|topk|sort|scan|radix|argmax|histogram", re.I),
        (3_000, 80_000),
        1.0,
    ),
    (
        "elementwise",
        re.compile(r"elementwise|rotary|act_and_mul|silu|gelu|copy|cat|fill|cache|index", re.I),
        (1_500, 40_000),
        3.0,
    ),
    ("misc", re.compile(r""), (2_000, 100_000), 1.0),
)


def categorize(name: str) -> tuple[str, tuple[int, int], float]:
    for cat, pat, span, weight in CATEGORIES:
        if pat.search(name):
            return cat, span, weight
    raise AssertionError("unreachable: misc matches everything")


def pick_names(rng: random.Random, n: int, names_file: Path | None) -> list[str]:
    real = real_names(names_file) if names_file else []
    rng.shuffle(real)
    chosen = real[: min(len(real), (2 * n) // 3)]
    seen = set(chosen)
    while len(chosen) < n:
        name = synthetic_name(rng)
        if name not in seen:
            seen.add(name)
            chosen.append(name)
    return chosen


# ---------------------------------------------------------------------------------------------
# Generation

KERNEL_COLS = (
    "start",
    "end",
    "deviceId",
    "contextId",
    "streamId",
    "correlationId",
    "globalPid",
    "demangledName",
    "shortName",
    "mangledName",
    "launchType",
    "cacheConfig",
    "registersPerThread",
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
    "staticSharedMemory",
    "dynamicSharedMemory",
    "localMemoryPerThread",
    "localMemoryTotal",
    "gridId",
    "sharedMemoryExecuted",
    "graphNodeId",
    "sharedMemoryLimitConfig",
)
RUNTIME_COLS = (
    "start",
    "end",
    "eventClass",
    "globalTid",
    "correlationId",
    "nameId",
    "returnValue",
    "callchainId",
)
MEMCPY_COLS = (
    "start",
    "end",
    "deviceId",
    "contextId",
    "streamId",
    "correlationId",
    "globalPid",
    "bytes",
    "copyKind",
    "srcKind",
    "dstKind",
    "srcDeviceId",
    "dstDeviceId",
)
MEMSET_COLS = (
    "start",
    "end",
    "deviceId",
    "contextId",
    "streamId",
    "correlationId",
    "globalPid",
    "value",
    "bytes",
    "memKind",
)
SMEM_CARVEOUTS = (0, 8192, 16384, 32768, 65536, 102400, 135168, 167936, 200704, 233472)


class Strings:
    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def __call__(self, value: str) -> int:
        sid = self.ids.get(value)
        if sid is None:
            sid = self.ids[value] = len(self.ids)
        return sid


def kernel_specs(rng: random.Random, names: list[str], strings: Strings) -> list[dict]:
    specs = []
    ranks = list(range(1, len(names) + 1))
    rng.shuffle(ranks)
    for name, rank in zip(names, ranks, strict=True):
        cat, (lo, hi), mult = categorize(name)
        short = short_name(name)
        mangled = mangled_name(name, short)
        # String ids in nsys order: mangled, demangled, short.
        ids = (strings(name), strings(short), strings(mangled))
        regs = rng.choice([16, 24, 32, 40, 56, 64, 72, 96, 128, 168, 255])
        static_smem = rng.choice([0, 0, 0, 1024, 4096, 16384, 49152])
        configs = []
        for _ in range(rng.choices((1, 2, 3), (70, 20, 10))[0]):
            if cat in ("gemm", "attention"):
                grid = (rng.choice([66, 114, 132, 264, 528, 1056]), rng.choice([1, 1, 2, 8]), 1)
                block = (rng.choice([128, 256, 384]), 1, 1)
                dyn = rng.choice([0, 49152, 98304, 166912, 232448])
            elif cat == "nccl":
                grid = (rng.choice([16, 24, 32]), 1, 1)
                block = (rng.choice([256, 512, 640]), 1, 1)
                dyn = 0
            else:
                grid = (
                    rng.choice([1, 8, 64, 128, 1024, 4096, 16384, 65535]),
                    rng.choice([1, 1, 4]),
                    1,
                )
                block = (rng.choice([64, 128, 256, 512, 1024]), 1, 1)
                dyn = rng.choice([0, 0, 1024, 8192])
            used = static_smem + dyn
            executed = next((c for c in SMEM_CARVEOUTS if c >= used), SMEM_CARVEOUTS[-1])
            # launchType .. localMemoryPerThread; then localMemoryTotal and gridId (per
            # launch), then sharedMemoryExecuted, graphNodeId, sharedMemoryLimitConfig.
            mid = (1, 0, regs, *grid, *block, static_smem, dyn, 0)
            tail = (executed, None, 1 if dyn > 49152 else 0)
            configs.append((mid, tail))
        mean = lo * (hi / lo) ** rng.random()  # log-uniform in the category's range
        specs.append(
            {
                "name": name,
                "cat": cat,
                "ids": ids,
                "configs": configs,
                "config_weights": [rng.choice([1, 3, 10]) for _ in configs],
                "mean": mean,
                "weight": mult / rank**0.9,
            }
        )
    return specs


def loop_programs(
    rng: random.Random, specs: list[dict], cum: list[float], k: int, switch_step: int | None
) -> tuple[list[int], list[int]]:
    """The loop of ``k`` spec indices every device repeats, and the loop from ``switch_step``.

    The loop is ``k`` picks by launch weight. With ``switch_step``, one kernel of the loop (the
    rarest attention kernel in it, else the rarest kernel) is replaced at all its places by a
    kernel that is not in the loop (an attention kernel when there is one), as a serving
    engine switching attention backends mid-run does; else both loops are the same.
    """
    loop = rng.choices(range(len(specs)), cum_weights=cum, k=k)
    if switch_step is None:
        return loop, loop
    counts: dict[int, int] = {}
    for i in loop:
        counts[i] = counts.get(i, 0) + 1
    out = [i for i in range(len(specs)) if i not in counts]
    if not out:
        sys.exit("make_trace: --switch-step needs a kernel name outside the loop: raise --names")

    def attention_first(ids):
        return sorted(ids, key=lambda i: specs[i]["cat"] != "attention")

    old = min(attention_first(counts), key=lambda i: (specs[i]["cat"] != "attention", counts[i]))
    new = attention_first(out)[0]
    return loop, [new if i == old else i for i in loop]


def generate(
    out: Path,
    kernels: int,
    n_names: int,
    seed: int,
    devices: int,
    schema: str,
    names_file: Path | None,
    write_to: Path | None = None,
    loop: int = 0,
    switch_step: int | None = None,
) -> dict:
    """Write the trace to ``write_to`` (default ``out``); ``out`` is the name recorded inside."""
    rng = random.Random(seed)
    ddl_path, ddl = load_ddl(schema)
    write_to = write_to or out
    if write_to.exists():
        write_to.unlink()
    write_to.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(write_to, isolation_level=None)
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    con.execute("PRAGMA cache_size=-262144")  # 256 MB
    con.execute("BEGIN")
    for sql in ddl.values():
        con.execute(sql)

    strings = Strings()
    for s in ("[Unknown]", "[kernel.kallsyms]", "[Max depth]", "[Broken backtraces]"):
        strings(s)
    api_launch = strings("cudaLaunchKernel_v7000")
    api_memcpy = strings("cudaMemcpyAsync_v3020")
    api_memset = strings("cudaMemsetAsync_v3020")
    thread_name = strings("python3")
    nccl_thread_name = strings("NCCL main thread")

    specs = kernel_specs(rng, pick_names(rng, n_names, names_file), strings)
    cum, total = [], 0.0
    for s in specs:
        total += s["weight"]
        cum.append(total)
    if loop:
        # Drawn only in loop mode, so the default trace's random stream is untouched.
        program, switched = loop_programs(rng, specs, cum, loop, switch_step)

    # One process per GPU (tensor-parallel ranks); globalPid = VM id 1 | pid << 24.
    procs = []
    for d in range(devices):
        pid = 48_213 + 37 * d
        gpid = (1 << 48) | (pid << 24)
        procs.append(
            {
                "dev": d,
                "pid": pid,
                "gpid": gpid,
                "gtid": gpid | pid,
                "nccl_tid": gpid | (pid + 9),
                "ctx": 1,
                # Streams: compute, side (copies, small kernels), NCCL.
                "streams": (7, 13 + 2 * d, 21 + 2 * d),
                "cursor": {},
                "corr": 0,
                "grid": 0,
                "lmt": 72_548_352 + 1_048_576 * d,
                "pos": 0,  # loop mode: launches so far on this device
            }
        )
        for sid in procs[-1]["streams"]:
            procs[-1]["cursor"][sid] = T0_NS + rng.randrange(50_000)

    ktab = Table(con, "CUPTI_ACTIVITY_KIND_KERNEL", KERNEL_COLS)
    rtab = Table(con, "CUPTI_ACTIVITY_KIND_RUNTIME", RUNTIME_COLS)
    has_copy = "CUPTI_ACTIVITY_KIND_MEMCPY" in ddl
    has_set = "CUPTI_ACTIVITY_KIND_MEMSET" in ddl
    ctab = Table(con, "CUPTI_ACTIVITY_KIND_MEMCPY", MEMCPY_COLS) if has_copy else None
    stab = Table(con, "CUPTI_ACTIVITY_KIND_MEMSET", MEMSET_COLS) if has_set else None

    rand = rng.random
    randrange = rng.randrange
    n_specs = len(specs)
    done = 0
    warmed = 0  # names launched by the warm-up so far
    while done < kernels:
        chunk = min(BATCH, kernels - done)
        krows: list[tuple] = []
        rrows: list[tuple] = []
        crows: list[tuple] = []
        srows: list[tuple] = []
        per_dev = [chunk // devices + (1 if i < chunk % devices else 0) for i in range(devices)]
        for p, n in zip(procs, per_dev, strict=True):
            if n == 0:
                continue
            # Every kernel name runs at least once (a warm-up: device 0 first, then the next
            # device or batch while names are left), then by weight. With at most one
            # batch's share of names, only device 0's first batch warms up.
            base = p["pos"]
            if loop:
                # No warm-up: a training/serving loop from its first step (``steps`` counts
                # them all); only the loop's names launch.
                picks = [
                    (program if (base + i) // loop < (switch_step or 1 << 62) else switched)[
                        (base + i) % loop
                    ]
                    for i in range(n)
                ]
                p["pos"] = base + n
            else:
                base = 0
                w = min(n_specs - warmed, n)
                picks = list(range(warmed, warmed + w))
                picks += rng.choices(range(n_specs), cum_weights=cum, k=n - w)
                warmed += w
            dev, ctx, gpid, gtid = p["dev"], p["ctx"], p["gpid"], p["gtid"]
            s_compute, s_side, s_nccl = p["streams"]
            cursor = p["cursor"]
            corr, grid_id, lmt = p["corr"], p["grid"], p["lmt"]
            for j, k in enumerate(picks, base):
                spec = specs[k]
                at = j % loop if loop else j  # place in the loop: the same every step
                cat = spec["cat"]
                if cat == "nccl":
                    sid, tid = s_nccl, p["nccl_tid"]
                    # Collectives wait for the compute stream to reach them.
                    t = max(cursor[s_nccl], cursor[s_compute]) + 2_000 + randrange(3_000)
                elif cat == "elementwise" and at % 7 == 0:
                    sid, tid = s_side, gtid
                    t = cursor[s_side] + 1_000 + randrange(20_000)
                else:
                    sid, tid = s_compute, gtid
                    t = cursor[s_compute] + 800 + randrange(2_500)
                    if not loop and j % 4096 == 4095:
                        t += 1_000_000 + randrange(4_000_000)  # step boundary: host sync
                r = rand()
                dur = int(spec["mean"] * (0.85 + 0.3 * r))
                if r > 0.995:
                    dur *= 2 + randrange(4)  # stragglers: contention, clock changes
                end = t + dur
                cursor[sid] = end
                corr += 1
                grid_id += 1
                configs = spec["configs"]
                mid, tail = (
                    configs[0]
                    if len(configs) == 1
                    else rng.choices(configs, spec["config_weights"])[0]
                )
                krows.append(
                    (t, end, dev, ctx, sid, corr, gpid, *spec["ids"], *mid, lmt, grid_id, *tail)
                )
                launch = t - 3_000 - randrange(40_000)
                rrows.append(
                    (launch, launch + 2_500 + randrange(5_000), 0, tid, corr, api_launch, 0, None)
                )
                if has_copy and at % 250 == 125:
                    corr += 1
                    kind = (1, 2, 8)[at % 3]  # HtoD, DtoH, DtoD
                    nbytes = (4096, 262_144, 16_777_216, 134_217_728)[randrange(4)]
                    src, dst = {1: (1, 2), 2: (2, 1), 8: (2, 2)}[kind]
                    t = cursor[s_side] + 1_500 + randrange(5_000)
                    cdur = 1_200 + nbytes // (25 if kind != 8 else 900)
                    cursor[s_side] = t + cdur
                    crows.append(
                        (
                            t,
                            t + cdur,
                            dev,
                            ctx,
                            s_side,
                            corr,
                            gpid,
                            nbytes,
                            kind,
                            src,
                            dst,
                            dev,
                            dev,
                        )
                    )
                    launch = t - 2_000 - randrange(20_000)
                    rrows.append(
                        (
                            launch,
                            launch + 3_000 + randrange(6_000),
                            0,
                            gtid,
                            corr,
                            api_memcpy,
                            0,
                            None,
                        )
                    )
                if has_set and at % 500 == 333:
                    corr += 1
                    nbytes = (512, 65_536, 8_388_608)[randrange(3)]
                    t = cursor[s_compute] + 1_000 + randrange(2_000)
                    mdur = 1_000 + nbytes // 1_500
                    cursor[s_compute] = t + mdur
                    srows.append((t, t + mdur, dev, ctx, s_compute, corr, gpid, 0, nbytes, 2))
                    launch = t - 2_000 - randrange(20_000)
                    rrows.append(
                        (
                            launch,
                            launch + 2_000 + randrange(3_000),
                            0,
                            gtid,
                            corr,
                            api_memset,
                            0,
                            None,
                        )
                    )
                if loop and at == loop - 1:
                    # Step boundary: the host waits for the device (all streams drained),
                    # then a few ms of host work before the next step's first launch.
                    resume = max(cursor.values()) + 2_000_000 + randrange(3_000_000)
                    for sid in cursor:
                        cursor[sid] = resume
            p["corr"], p["grid"] = corr, grid_id
        ktab.insert(krows)
        rtab.insert(rrows)
        if crows:
            ctab.insert(crows)
        if srows:
            stab.insert(srows)
        done += chunk
        print(f"\r  {done:,}/{kernels:,} kernels", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)

    last_ns = max(max(p["cursor"].values()) for p in procs)
    write_small_tables(
        con, ddl, schema, procs, strings, thread_name, nccl_thread_name, last_ns, out
    )
    con.executemany(
        "INSERT INTO StringIds (id, value) VALUES (?, ?)",
        sorted((i, v) for v, i in strings.ids.items()),
    )
    con.execute("COMMIT")
    con.close()
    return {
        "ddl": str(ddl_path),
        "kernels": ktab.count,
        "runtime": rtab.count,
        "memcpy": ctab.count if ctab else 0,
        "memset": stab.count if stab else 0,
        "names": len(specs),
        "strings": len(strings.ids),
        "per_device": [p["pos"] for p in procs],
    }


def write_small_tables(
    con, ddl, schema, procs, strings, thread_name, nccl_thread_name, last_ns, out
):
    tables = set(ddl)
    enums = {
        "ENUM_CUDA_MEMCPY_OPER": [
            ("UNKNOWN", "Unknown"),
            ("HTOD", "Host-to-Device"),
            ("DTOH", "Device-to-Host"),
            ("HTOA", "Host-to-Array"),
            ("ATOH", "Array-to-Host"),
            ("ATOA", "Array-to-Array"),
            ("ATOD", "Array-to-Device"),
            ("DTOA", "Device-to-Array"),
            ("DTOD", "Device-to-Device"),
            ("HTOH", "Host-to-Host"),
            ("PTOP", "Peer-to-Peer"),
            ("UVM_HTOD", "Unified Host-to-Device"),
            ("UVM_DTOH", "Unified Device-to-Host"),
            ("UVM_DTOD", "Unified Device-to-Device"),
        ],
        "ENUM_CUDA_MEM_KIND": [
            ("PAGEABLE", "Pageable"),
            ("PINNED", "Pinned"),
            ("DEVICE", "Device"),
            ("ARRAY", "Array"),
            ("MANAGED", "Managed"),
            ("DEVICE_STATIC", "Device Static"),
            ("MANAGED_STATIC", "Managed Static"),
            ("UNKNOWN", "Unknown"),
        ],
        "ENUM_CUDA_KRENEL_LAUNCH_TYPE": [
            ("UNKNOWN", "Unknown"),
            ("REGULAR", "Regular"),
            ("COOPERATIVE_SINGLE_DEVICE", "Coop Single Device"),
            ("COOPERATIVE_MULTI_DEVICE", "Coop Multi Device"),
        ],
        "ENUM_CUDA_FUNC_CACHE_CONFIG": [
            ("PREFER_NONE", "None"),
            ("PREFER_SHARED", "Shared"),
            ("PREFER_L1", "L1"),
            ("PREFER_EQUAL", "Equal"),
        ],
        "ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG": [("DEFAULT", "Default"), ("OPTIN", "Opt in")],
        "ENUM_CUPTI_SYNC_TYPE": [
            ("UNKNOWN", "Unknown"),
            ("EVENT_SYNCHRONIZE", "Event sync"),
            ("STREAM_WAIT_EVENT", "Stream wait sync"),
            ("STREAM_SYNCHRONIZE", "Stream sync"),
            ("CONTEXT_SYNCHRONIZE", "Context sync"),
        ],
    }
    for table, rows in enums.items():
        for name in (table, table.replace("KRENEL", "KERNEL")):
            if name in tables:
                insert_dicts(
                    con,
                    name,
                    [
                        {"id": i, "name": f"{table[5:]}_{n}", "label": lab}
                        for i, (n, lab) in enumerate(rows)
                    ],
                )
                break

    meta_table = "EXPORT_META_DATA" if "EXPORT_META_DATA" in tables else "META_DATA_EXPORT"
    if meta_table in tables:
        schema = schema.removesuffix("_full")
        major, minor, micro = (schema.split(".") + ["0", "0"])[:3]
        version = NSYS_VERSION.get(schema, "2022.4.2.1")
        meta = [
            ("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"),
            ("EXPORT_PRODUCT_VERSION", version),
            ("EXPORT_PRODUCT_DATE", ".".join(version.split(".")[:2])),
            ("EXPORT_SCHEMA_VERSION", schema),
            ("EXPORT_SCHEMA_VERSION_MAJOR", major),
            ("EXPORT_SCHEMA_VERSION_MINOR", minor),
            ("EXPORT_SCHEMA_VERSION_MICRO", micro),
            ("EXPORT_PLATFORM", "linux-desktop"),
            ("EXPORT_ARCH", "x64"),
            ("EXPORT_TIME_UTC", "2025-01-01T00:10:00"),
            ("EXPORT_HOST", "bench"),
            ("EXPORT_INPUT_FILE", out.with_suffix(".nsys-rep").name),
            (
                "EXPORT_OUTUPT_FILE" if meta_table == "EXPORT_META_DATA" else "EXPORT_OUTPUT_FILE",
                out.name,
            ),
            ("EXPORT_OVERWRITE", "true"),
            ("EXPORT_LAZY", "true"),
            ("BENCH_GENERATOR", "tracelens bench/make_trace.py (synthetic)"),
        ]
        insert_dicts(con, meta_table, [{"name": k, "value": v} for k, v in meta])

    if "TARGET_INFO_SESSION_START_TIME" in tables:
        insert_dicts(
            con,
            "TARGET_INFO_SESSION_START_TIME",
            [
                {
                    "utcEpochNs": SESSION_UTC_NS,
                    "utcTime": "2025-01-01T00:00:00",
                    "localTime": "2025-01-01T00:00:00",
                }
            ],
        )
    if "ANALYSIS_DETAILS" in tables:
        insert_dicts(
            con,
            "ANALYSIS_DETAILS",
            [
                {
                    "globalVid": 1 << 48,
                    "duration": last_ns + 10**9,
                    "startTime": 0,
                    "stopTime": last_ns + 10**9,
                }
            ],
        )
    if "TARGET_INFO_GPU" in tables:
        insert_dicts(
            con,
            "TARGET_INFO_GPU",
            [
                {
                    "vmId": 1,
                    "id": p["dev"],
                    "name": "NVIDIA H100 80GB HBM3",
                    "busLocation": f"0000:{0x18 + 0x10 * p['dev']:02x}:00.0",
                    "isDiscrete": 1,
                    "l2CacheSize": 52_428_800,
                    "totalMemory": 85_520_809_984,
                    "memoryBandwidth": 3_352_320_000_000,
                    "clockRate": 1_980_000_000,
                    "smCount": 132,
                    "uuid": f"GPU-{hashlib.md5(bytes([p['dev']])).hexdigest()}",
                    "chipName": "GH100",
                    "cuDevice": p["dev"],
                    "computeMajor": 9,
                    "computeMinor": 0,
                }
                for p in procs
            ],
        )
    if "TARGET_INFO_CUDA_STREAM" in tables:
        insert_dicts(
            con,
            "TARGET_INFO_CUDA_STREAM",
            [
                {
                    "streamId": sid,
                    "hwId": 0,
                    "vmId": 1,
                    "processId": p["pid"],
                    "contextId": p["ctx"],
                    "priority": 0,
                    "flag": 3 if sid == 7 else 2,
                }
                for p in procs
                for sid in p["streams"]
            ],
        )
    # Every real export with CUDA work lists each context with its device and process:
    # TARGET_INFO_CUDA_NULL_STREAM up to schema 3.4, TARGET_INFO_CUDA_CONTEXT_INFO after.
    for table, stream_key in (
        ("TARGET_INFO_CUDA_NULL_STREAM", "streamId"),
        ("TARGET_INFO_CUDA_CONTEXT_INFO", "nullStreamId"),
    ):
        if table in tables:
            insert_dicts(
                con,
                table,
                [
                    {
                        stream_key: 7,
                        "hwId": 0,
                        "vmId": 1,
                        "processId": p["pid"],
                        "deviceId": p["dev"],
                        "contextId": p["ctx"],
                    }
                    for p in procs
                ],
            )
    if "PROCESSES" in tables:
        insert_dicts(
            con,
            "PROCESSES",
            [{"globalPid": p["gpid"], "pid": p["pid"], "name": "python3"} for p in procs],
        )
    if "ThreadNames" in tables:
        insert_dicts(
            con,
            "ThreadNames",
            [{"nameId": thread_name, "priority": 10, "globalTid": p["gtid"]} for p in procs]
            + [
                {"nameId": nccl_thread_name, "priority": 10, "globalTid": p["nccl_tid"]}
                for p in procs
            ],
        )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="the .sqlite file to write (replaced if it exists)")
    ap.add_argument("--kernels", type=int, default=5_000_000, help="kernel rows (default 5000000)")
    ap.add_argument("--names", type=int, default=300, help="distinct kernel names (default 300)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--devices", type=int, default=4, help="GPUs, one process each (default 4)")
    ap.add_argument(
        "--schema",
        default="3.0.0",
        help="export schema version of the DDL (default 3.0.0 = nsys 2022.4)",
    )
    ap.add_argument(
        "--names-file",
        type=Path,
        default=NAMES_FILE if NAMES_FILE.is_file() else None,
        help="TSV of real kernel names (source<TAB>name); default: ../shared/kernel_names/real_kernel_names.tsv",
    )
    ap.add_argument(
        "--loop",
        type=int,
        default=0,
        metavar="K",
        help="periodic job: every device repeats one loop of K launches, steps separated by a "
        "2-5 ms host pause (default 0: random launches, no steps)",
    )
    ap.add_argument(
        "--switch-step",
        type=int,
        default=None,
        metavar="S",
        help="with --loop: from step S (0-based) on, one kernel of the loop is replaced by a "
        "kernel outside it (an attention kernel when there is one)",
    )
    args = ap.parse_args(argv)
    if args.kernels < 1 or args.names < 1 or args.devices < 1:
        ap.error("--kernels, --names and --devices must be at least 1")
    if args.loop < 0:
        ap.error("--loop must be at least 0")
    if args.switch_step is not None and (not args.loop or args.switch_step < 0):
        ap.error("--switch-step needs --loop and must be at least 0")
    t0 = time.perf_counter()
    tmp = args.out.with_name(args.out.name + ".partial")
    try:
        stats = generate(
            args.out,
            args.kernels,
            args.names,
            args.seed,
            args.devices,
            args.schema,
            args.names_file,
            write_to=tmp,
            loop=args.loop,
            switch_step=args.switch_step,
        )
        os.replace(tmp, args.out)
    finally:
        if tmp.exists():
            tmp.unlink()
    size = args.out.stat().st_size
    print(
        f"{args.out}: {size / 1e6:,.1f} MB, {stats['kernels']:,} kernels ({stats['names']} names), "
        f"{stats['runtime']:,} runtime, {stats['memcpy']:,} memcpy, {stats['memset']:,} memset rows, "
        f"{stats['strings']:,} strings; DDL {stats['ddl']}; {time.perf_counter() - t0:.1f} s"
    )
    if args.loop:
        steps = [-(-n // args.loop) for n in stats["per_device"]]
        print(f"loop of {args.loop} launches: steps per device {steps} (the last may be partial)")


if __name__ == "__main__":
    main()
