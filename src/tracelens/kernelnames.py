"""GPU kernel names: normalization, in-process demangling and decoding into fields.

Profilers spell the same kernel differently: nsys ``shortName``
(``vectorized_elementwise_kernel``), nsys ``demangledName``
(``void at::native::vectorized_elementwise_kernel<(int)4, ...>(int, T2, T3)``, ``<unnamed>``),
kineto (``(anonymous namespace)``, ``4`` not ``(int)4``) and mangled ``_Z...`` names.
:func:`normalize` maps them to one form; :func:`decode` says what a name means, field by
field, with a confidence for each field::

    from tracelens.kernelnames import decode
    k = decode("nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_bias_TNN")
    k.family, k.category          # ('nvjet', 'gemm')
    [(f.name, f.value, f.confidence) for f in k.fields]

Confidence follows ``KERNEL_NAMES.md``: ``confirmed`` = read in the generator's source or the
vendor's docs, ``inferred`` = consistent evidence but no vendor statement, ``unknown`` =
nobody has published it. Tokens a parser does not know are reported as ``unknown`` fields,
never dropped.

Every regular expression here is linear-time (no nested or overlapping quantifiers);
normalization reads at most :data:`MAX_NAME_CHARS` characters of a name and parsing and
matching look at most at the first :data:`MAX_PARSE_CHARS` characters of the result.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import html
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl

__all__ = [
    "CONFIDENCES",
    "FAMILIES",
    "Field",
    "KernelName",
    "base_name",
    "decode",
    "decode_column",
    "demangle",
    "demangler_available",
    "normalize",
    "qualified_name",
]

CONFIRMED = "confirmed"
INFERRED = "inferred"
UNKNOWN = "unknown"
CONFIDENCES = (CONFIRMED, INFERRED, UNKNOWN)

#: Decoder families (snake_case). ``other`` means no decoder recognised the name.
FAMILIES = (
    "nvjet",
    "cublas_xmma",
    "cublas_arch",
    "cublas_helper",
    "cutlass2",
    "cutlass3",
    "cute_device_kernel",
    "flash_attention_2",
    "flash_attention_3",
    "flash_attention_4",
    "flashinfer",
    "vllm",
    "xformers",
    "trtllm",
    "cudnn",
    "nccl",
    "nccl_legacy",
    "nccl_symmetric",
    "custom_allreduce",
    "aten_elementwise",
    "aten_reduce",
    "aten_index",
    "aten_softmax",
    "aten_norm",
    "aten_sort",
    "aten_copy",
    "aten",
    "cub",
    "fbgemm",
    "inductor_triton",
    "xla_fusion",
    "llm_serving",
    "memcpy_memset",
    "other",
)

#: Parsing and matching look at most at this many characters of a (normalized) name.
MAX_PARSE_CHARS = 4096
#: Longer inputs are truncated before normalization (the longest real kernel names seen are
#: about 2,000 characters); decode() reports a ``truncated`` field when this happens.
MAX_NAME_CHARS = 16384
#: Longer mangled names are not handed to the C++ demangler.
MAX_DEMANGLE_CHARS = 16384

# Demangling status values (``KernelName.demangling``).
NOT_MANGLED = "not_mangled"
DEMANGLED = "demangled"
DEMANGLE_FAILED = "failed"
DEMANGLER_UNAVAILABLE = "unavailable"


# =========================================================================================
# Demangling: libstdc++'s __cxa_demangle through ctypes
# =========================================================================================
class _Demangler:
    """``abi::__cxa_demangle`` from the C++ runtime, loaded lazily; never raises."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loaded = False
        self._fn = None
        self._free = None

    @staticmethod
    def _candidates() -> Iterator[str | None]:
        # Direct sonames first: ctypes.util.find_library may spawn ldconfig/gcc.
        yield "libstdc++.so.6"
        yield "libc++abi.dylib"
        yield "libc++.1.dylib"
        for lib in ("stdc++", "c++abi", "c++"):
            try:
                yield ctypes.util.find_library(lib)
            except Exception:  # pragma: no cover - platform specific
                yield None

    def _load(self) -> None:
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            free = None
            for cand in (None, ctypes.util.find_library("c")):
                try:
                    free = ctypes.CDLL(cand).free
                    break
                except Exception:  # pragma: no cover - platform specific
                    continue
            if free is None:  # pragma: no cover - no libc free(): do not leak, do not demangle
                return
            free.argtypes = [ctypes.c_void_p]
            free.restype = None
            for cand in self._candidates():
                if not cand:
                    continue
                try:
                    # getattr: a literal ``.__cxa_demangle`` inside a class body would be
                    # name-mangled by Python to ``_Demangler__cxa_demangle``.
                    fn = getattr(ctypes.CDLL(cand), "__cxa_demangle")  # noqa: B009
                except Exception:
                    continue
                fn.restype = ctypes.c_void_p
                fn.argtypes = [
                    ctypes.c_char_p,
                    ctypes.c_char_p,
                    ctypes.POINTER(ctypes.c_size_t),
                    ctypes.POINTER(ctypes.c_int),
                ]
                self._fn, self._free = fn, free
                return

    @property
    def available(self) -> bool:
        if not self._loaded:
            self._load()
        return self._fn is not None

    def __call__(self, name: str) -> str | None:
        if not self.available or len(name) > MAX_DEMANGLE_CHARS or "\x00" in name:
            return None
        try:
            raw = name.encode("utf-8")
        except UnicodeError:
            return None
        status = ctypes.c_int(0)
        try:
            ptr = self._fn(raw, None, None, ctypes.byref(status))  # type: ignore[misc]
        except Exception:  # pragma: no cover - defensive: a ctypes failure is not a crash
            return None
        if not ptr:
            return None
        try:
            if status.value != 0:
                return None
            return ctypes.string_at(ptr).decode("utf-8", "replace")
        finally:
            self._free(ptr)  # type: ignore[misc]


_DEMANGLER = _Demangler()


def demangler_available() -> bool:
    """Whether the C++ runtime's ``__cxa_demangle`` could be loaded in this process."""
    return _DEMANGLER.available


def demangle(name: str) -> str | None:
    """Demangle an Itanium C++ name (``_Z...``) in-process; None if it cannot be demangled
    (not mangled, invalid or truncated, or no C++ runtime available)."""
    if not isinstance(name, str) or not name.startswith("_Z"):
        return None
    return _DEMANGLER(name)


_SOURCE_NAME = re.compile(r"(\d{1,3})")


def _partial_demangle(name: str) -> tuple[str, tuple[str, ...]] | None:
    """Best effort for a mangled name the demangler rejected (often a truncated export):
    the leading qualified name (``ns::name``, ``<...>`` when template arguments follow) and
    the identifiers that can be read anywhere in the name."""
    s = name[:MAX_PARSE_CHARS]
    i = 2
    if s.startswith("N", i):
        i += 1
        while i < len(s) and s[i] in "rVKRO":
            i += 1
    parts: list[str] = []
    while i < len(s) and s[i].isdigit():
        j = i
        while j < len(s) and s[j].isdigit() and j - i < 4:
            j += 1
        n = int(s[i:j])
        ident = s[j : j + n]
        if n == 0 or len(ident) < n or not _is_identifier(ident):
            break
        parts.append(ident)
        i = j + n
    idents: list[str] = []
    pos = 2
    while pos < len(s) and len(idents) < 64:
        m = _SOURCE_NAME.search(s, pos)
        if not m:
            break
        n = int(m.group(1))
        ident = s[m.end() : m.end() + n]
        if n >= 2 and len(ident) == n and _is_identifier(ident):
            idents.append(ident)
            pos = m.end() + n
        else:
            pos = m.end()
    if not parts:
        return None
    qual = "::".join(parts)
    if i < len(s) and s[i] == "I":
        qual += "<...>"
    return qual, tuple(dict.fromkeys(idents))


_IDENT_FULL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _is_identifier(s: str) -> bool:
    return _IDENT_FULL.fullmatch(s) is not None


# =========================================================================================
# Normalization
# =========================================================================================
_ANON = "(anonymous namespace)"
_INT_TYPES = (
    r"(?:unsigned |signed )?(?:char|short|int|long long|long|__int128)(?: int)?|unsigned|"
    r"u?int(?:8|16|32|64)_t|size_t"
)
_BOOL_CAST = re.compile(r"\(bool\)([01])\b")
_INT_CAST = re.compile(r"\((?:" + _INT_TYPES + r")\)(-?\d+)")
_INT_SUFFIX = re.compile(r"\b(\d+)(?:ull|llu|ul|lu|ll|u|l)\b")
_SPACE_RUN = re.compile(r"\s+")
_SPACE_BEFORE_PTR = re.compile(r"(?<=[\w>*&\]]) (?=[*&])")
_GT_GT = re.compile(r"> (?=>)")
_MEMORY_ROW = re.compile(
    r"^(?:\[CUDA (?:Unified Memory )?(?:memcpy|memset)|CUDA (?:memcpy|memset)|Memcpy |Memset )"
)
_SPECIAL = re.compile(r"[()<>\[\]{} ]")
_CXX_START = re.compile(r"[A-Za-z_~:]|\(anonymous namespace\)")
_TYPEWORDS = frozenset(
    "void bool char short int long unsigned signed float double auto size_t".split()
)


class _Norm(NamedTuple):
    normalized: str
    demangling: str
    identifiers: tuple[str, ...]


def _pop_to(stack: list[str], counts: dict[str, int], opener: str) -> None:
    if not counts[opener]:
        return
    while stack:
        top = stack.pop()
        counts[top] -= 1
        if top == opener:
            return


def _scan_top_level(s: str) -> tuple[int, int]:
    """(index of the first top-level ``(`` that starts an argument list, else len(s);
    index of the last top-level space before it, else -1). Linear in len(s)."""
    stack: list[str] = []
    counts = {"(": 0, "<": 0, "[": 0, "{": 0}
    last_space = -1
    skip_to = -1
    for m in _SPECIAL.finditer(s):
        i = m.start()
        if i < skip_to:
            continue
        c = s[i]
        if c == "(":
            if not stack:
                if s.startswith(_ANON, i):
                    skip_to = i + len(_ANON)
                    continue
                if s.endswith("operator", 0, i) and s.startswith("()", i):
                    skip_to = i + 2
                    continue
                if i > 0:
                    return i, last_space
            stack.append(c)
            counts[c] += 1
        elif c == ")":
            _pop_to(stack, counts, "(")
        elif c == "<":
            if s.endswith("operator", 0, i) or s.endswith("operator<", 0, i):
                continue
            stack.append(c)
            counts[c] += 1
        elif c == ">":
            if i and s[i - 1] == "-":
                continue
            if stack and stack[-1] == "<":
                stack.pop()
                counts["<"] -= 1
        elif c in "[{":
            stack.append(c)
            counts[c] += 1
        elif c == "]":
            _pop_to(stack, counts, "[")
        elif c == "}":
            _pop_to(stack, counts, "{")
        elif c == " " and not stack:
            last_space = i
    return len(s), last_space


def _looks_like_return_type(prefix: str) -> bool:
    p = prefix.strip()
    return bool(p) and ("::" in p or "<" in p or p in _TYPEWORDS or p.endswith("*"))


def _canonical_text(s: str) -> str:
    s = s.replace("<unnamed>", _ANON).replace("{anonymous}", _ANON)
    s = _BOOL_CAST.sub(lambda m: "true" if m.group(1) == "1" else "false", s)
    s = _INT_CAST.sub(r"\1", s)
    s = _INT_SUFFIX.sub(r"\1", s)
    s = s.replace("operator ()", "operator()")
    return s


def _tidy(s: str) -> str:
    s = _SPACE_RUN.sub(" ", s).strip()
    s = _SPACE_BEFORE_PTR.sub("", s)
    s = _GT_GT.sub(">", s)
    return s


@lru_cache(maxsize=8192)
def _normalize_full(name: str) -> _Norm:
    s = name[:MAX_NAME_CHARS].strip()
    status, idents = NOT_MANGLED, ()
    if s.startswith("_Z"):
        dem = _DEMANGLER(s)
        if dem is not None:
            s, status = dem, DEMANGLED
        else:
            status = DEMANGLE_FAILED if _DEMANGLER.available else DEMANGLER_UNAVAILABLE
            part = _partial_demangle(s)
            if part is None:
                return _Norm(s, status, ())
            s, idents = part
            return _Norm(s, status, idents)
    if _MEMORY_ROW.match(s):
        return _Norm(_SPACE_RUN.sub(" ", s), status, idents)
    s = _SPACE_RUN.sub(" ", s)
    if s.startswith("void "):
        s = s[5:]
    s = _canonical_text(s)
    if not _CXX_START.match(s):
        # Not a C++ name (nothing real starts with '<', '"', a digit ...): tidy only, never
        # cut, so odd text is shown as it came.
        return _Norm(_tidy(s), status, idents)
    cut, last_space = _scan_top_level(s)
    head = s[:cut]
    if last_space > 0 and _looks_like_return_type(head[:last_space]):
        head = head[last_space + 1 :]
    out = _tidy(head)
    return _Norm(out or _tidy(s), status, idents)


def normalize(name: str) -> str:
    """One spelling for every producer's form of a kernel name.

    Demangles ``_Z...`` names in-process, strips a leading return type (``void ``), cuts the
    argument list at the top-level ``(`` (not one inside ``<...>``), writes ``(int)4`` as
    ``4``, ``(bool)0`` as ``false`` and ``1ul`` as ``1``, writes ``<unnamed>`` as
    ``(anonymous namespace)``, and tidies spaces (``char *`` -> ``char*``, ``> >`` -> ``>>``).
    Memcpy/memset rows (``[CUDA memcpy HtoD]``) are returned with spaces tidied only.
    """
    if not isinstance(name, str):
        raise TypeError(f"kernel name must be str, not {type(name).__name__}")
    return _normalize_full(name).normalized


def _strip_templates(s: str) -> str:
    """``s`` without what is inside top-level ``<...>`` (and without ``(...)`` groups other
    than ``(anonymous namespace)``). Linear."""
    out: list[str] = []
    depth_stack: list[str] = []
    counts = {"(": 0, "<": 0, "[": 0, "{": 0}
    start = 0
    skip_to = -1
    for m in _SPECIAL.finditer(s):
        i = m.start()
        if i < skip_to:
            continue
        c = s[i]
        if c == " ":
            continue
        if not depth_stack and c == "(" and s.startswith(_ANON, i):
            skip_to = i + len(_ANON)
            continue
        if c in "(<[{":
            if c == "<" and (s.endswith("operator", 0, i) or s.endswith("operator<", 0, i)):
                continue
            if not depth_stack:
                out.append(s[start:i])
            depth_stack.append(c)
            counts[c] += 1
        elif c == ">":
            if i and s[i - 1] == "-":
                continue
            if depth_stack and depth_stack[-1] == "<":
                depth_stack.pop()
                counts["<"] -= 1
                if not depth_stack:
                    start = i + 1
        else:
            opener = {")": "(", "]": "[", "}": "{"}[c]
            had = bool(depth_stack)
            _pop_to(depth_stack, counts, opener)
            if had and not depth_stack:
                start = i + 1
    if not depth_stack:
        out.append(s[start:])
    return "".join(out).strip()


def qualified_name(name: str) -> str:
    """The normalized name without template arguments: ``at::native::reduce_kernel``."""
    if not isinstance(name, str):
        raise TypeError(f"kernel name must be str, not {type(name).__name__}")
    return _name_parts(name)[1]


def _base_from_qual(qual: str) -> str:
    base = qual.rsplit("::", 1)[-1].strip()
    return base or qual


@lru_cache(maxsize=8192)
def _name_parts(name: str) -> tuple[str, str, str]:
    """(normalized name capped at MAX_PARSE_CHARS, qualified name, base name)."""
    capped = _normalize_full(name).normalized[:MAX_PARSE_CHARS]
    if _MEMORY_ROW.match(capped):
        return capped, capped, capped
    qual = _strip_templates(capped) or capped
    return capped, qual, _base_from_qual(qual)


def base_name(name: str) -> str:
    """The identifier without namespace or template arguments: ``vectorized_elementwise_kernel``."""
    if not isinstance(name, str):
        raise TypeError(f"kernel name must be str, not {type(name).__name__}")
    return _name_parts(name)[2]


# =========================================================================================
# Fields and the decoded name
# =========================================================================================
@dataclass(frozen=True, slots=True)
class Field:
    """One decoded piece of a kernel name."""

    name: str
    value: str
    meaning: str
    confidence: str  # "confirmed" | "inferred" | "unknown"

    def to_dict(self) -> dict[str, str]:
        return {
            "name": self.name,
            "value": self.value,
            "meaning": self.meaning,
            "confidence": self.confidence,
        }


@dataclass(frozen=True)
class KernelName:
    """A kernel name, normalized and decoded.

    ``category``/``subfamily``/``rule_id`` come from :mod:`tracelens.categories` (the one
    source of truth for categories). ``demangling`` is ``not_mangled``, ``demangled``,
    ``failed`` (the C++ demangler rejected it; identifiers were recovered best-effort) or
    ``unavailable`` (no C++ runtime in this process).
    """

    raw: str
    normalized: str
    base: str
    family: str
    category: str
    subfamily: str | None
    rule_id: str | None
    fields: tuple[Field, ...]
    demangling: str = NOT_MANGLED

    def field(self, name: str) -> Field | None:
        """The first field called ``name``, or None."""
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def get(self, name: str, default: str | None = None) -> str | None:
        f = self.field(name)
        return f.value if f is not None else default

    def to_dict(self) -> dict[str, object]:
        return {
            "raw": self.raw,
            "normalized": self.normalized,
            "base": self.base,
            "family": self.family,
            "category": self.category,
            "subfamily": self.subfamily,
            "rule_id": self.rule_id,
            "demangling": self.demangling,
            "fields": [f.to_dict() for f in self.fields],
        }

    def _repr_html_(self) -> str:
        e = html.escape
        head = (
            f"<p><code>{e(self.normalized)}</code><br>family <b>{e(self.family)}</b>, "
            f"category <b>{e(self.category)}</b>"
            + (f" / {e(self.subfamily)}" if self.subfamily else "")
            + "</p>"
        )
        rows = "".join(
            f"<tr><td>{e(f.name)}</td><td><code>{e(f.value)}</code></td>"
            f"<td>{e(f.meaning)}</td><td>{e(f.confidence)}</td></tr>"
            for f in self.fields
        )
        return (
            head + "<table><thead><tr><th>field</th><th>value</th><th>meaning</th>"
            "<th>confidence</th></tr></thead><tbody>" + rows + "</tbody></table>"
        )


class _Ctx(NamedTuple):
    raw: str
    normalized: str  # capped at MAX_PARSE_CHARS
    qual: str
    base: str


def _f(name: str, value: object, meaning: str, confidence: str) -> Field:
    return Field(name, str(value), meaning, confidence)


def _unknown_token(tok: str, where: str = "") -> Field:
    return Field("unknown_token", tok, f"token not documented{where}", UNKNOWN)


# -- shared helpers -------------------------------------------------------------------------
def _template_args(s: str, open_idx: int) -> list[str]:
    """Top-level arguments of the template argument list whose ``<`` is at ``open_idx``.
    Linear; a truncated list returns the arguments seen so far."""
    args: list[str] = []
    depth = 0
    paren = 0
    start = open_idx + 1
    for i in range(open_idx, len(s)):
        c = s[i]
        if c == "(":
            paren += 1
        elif c == ")":
            paren = max(0, paren - 1)
        elif paren:
            continue
        elif c == "<":
            depth += 1
        elif c == ">":
            if i and s[i - 1] == "-":
                continue
            depth -= 1
            if depth == 0:
                args.append(s[start:i].strip())
                return args
        elif c == "," and depth == 1:
            args.append(s[start:i].strip())
            start = i + 1
    tail = s[start:].strip()
    if tail:
        args.append(tail)
    return args


def _args_after(s: str, marker: str) -> list[str] | None:
    i = s.find(marker)
    if i < 0:
        return None
    j = i + len(marker) - 1
    if j >= len(s) or s[j] != "<":
        return None
    return _template_args(s, j)


_CUTE_C = re.compile(r"cute::C<(-?\d+)>|cute::_(\d+)\b|\bInt<(\d+)>")


def _cute_shape(arg: str) -> str | None:
    vals = [a or b or c for a, b, c in _CUTE_C.findall(arg)]
    return "x".join(vals) if vals else None


_CPP_TYPES = {
    "cutlass::half_t": "fp16",
    "cutlass::bfloat16_t": "bf16",
    "cutlass::float_e4m3_t": "fp8_e4m3",
    "cutlass::float_e5m2_t": "fp8_e5m2",
    "__half": "fp16",
    "half": "fp16",
    "__nv_bfloat16": "bf16",
    "c10::BFloat16": "bf16",
    "c10::Half": "fp16",
    "c10::Float8_e4m3fn": "fp8_e4m3",
    "c10::Float8_e5m2": "fp8_e5m2",
    "__nv_fp8_e4m3": "fp8_e4m3",
    "__nv_fp8_e5m2": "fp8_e5m2",
    "float": "fp32",
    "double": "fp64",
    "int": "int32",
    "long": "int64",
    "bool": "bool",
    "signed char": "int8",
    "unsigned char": "uint8",
    "int8_t": "int8",
    "uint8_t": "uint8",
    "cutlass::tfloat32_t": "tf32",
}


def _cpp_dtype(arg: str) -> str:
    a = arg.strip().removesuffix(" const").removeprefix("const ")
    return _CPP_TYPES.get(a, a)


_BOOL_NAMES_FA2_FWD = (
    "is_dropout",
    "is_causal",
    "is_local",
    "has_alibi",
    "is_even_mn",
    "is_even_k",
    "is_softcap",
    "return_softmax",
)
_BOOL_NAMES_FA2_SPLITKV = (
    "is_causal",
    "is_local",
    "has_alibi",
    "is_even_mn",
    "is_even_k",
    "is_softcap",
    "split",
    "append_kv",
)
_FA2_SRC = "upstream FlashAttention-2 flash_fwd_launch_template.h order; forks may differ"


# -- memcpy / memset rows -------------------------------------------------------------------
_MEM_DIR = re.compile(
    r"\b(HtoD|DtoH|DtoD|HtoH|PtoP|Host-to-Device|Device-to-Host|Device-to-Device|Peer-to-Peer)\b"
)  # noqa: E501
_MEM_KINDS = re.compile(r"\((\w+) -> (\w+)\)")


def _parse_memory_row(c: _Ctx) -> tuple[str, list[Field]] | None:
    n = c.normalized
    if not _MEMORY_ROW.match(n):
        return None
    kind = "memset" if "emset" in n else "memcpy"
    fields = [_f("operation", kind, "CUDA runtime memory operation row, not a kernel", CONFIRMED)]
    m = _MEM_DIR.search(n)
    if m:
        fields.append(
            _f("direction", m.group(1), "copy direction as labelled by the profiler", CONFIRMED)
        )  # noqa: E501
    m = _MEM_KINDS.search(n)
    if m:
        fields.append(_f("src_kind", m.group(1), "source memory kind", CONFIRMED))
        fields.append(_f("dst_kind", m.group(2), "destination memory kind", CONFIRMED))
    return "memcpy_memset", fields


# -- nvjet ----------------------------------------------------------------------------------
# The regex from KERNEL_NAMES.md (the optional _tf32 is captured so it can be reported).
# Linear: every repetition of the flags group starts with "_" and [A-Za-z0-9] excludes "_".
_NVJET = re.compile(
    r"^nvjet_(?:(sm\d+[a-z]?)_)?([a-z]{3,5})(_tf32)?_(\d+)x(\d+)_(\d+)x(\d+)_(\d+)x(\d+)"
    r"((?:_[A-Za-z0-9]+)*?)_([NT]{3})$"
)
_NVJET_DTYPES = {"s": "fp32", "h": "fp16", "t": "bf16", "q": "fp8_e4m3", "o": "fp4"}
_NVJET_BLOCKSCALE = re.compile(r"^([AB])vec(\d+)(UE8M0|UE4M3)$")
_NVJET_FLAGS = {
    "v": ("raster_order", "raster order v (CTA traversal order; v/h)", INFERRED),
    "h": ("raster_order", "raster order h (CTA traversal order; v/h)", INFERRED),
    "bz": ("beta", "beta = 0: C is not read", INFERRED),
    "badd": ("beta", "beta != 0: C is added", INFERRED),
    "bias": ("epilogue", "bias epilogue", INFERRED),
    "splitK": (
        "split_k",
        "split-K: partial sums are combined by a separate splitKreduce_kernel launch",
        CONFIRMED,
    ),
    "2cta": ("mma", "2-SM (CTA pair) MMA", INFERRED),
    "coopA": ("coop", "probably cooperative/multicast load of A (unpublished)", UNKNOWN),
    "coopB": ("coop", "probably cooperative/multicast load of B (unpublished)", UNKNOWN),
}


def _nvjet_dtype_fields(letters: str) -> list[Field]:
    if len(letters) == 3:
        roles = [
            ("input_dtype", "A/B input"),
            ("compute_dtype", "compute"),
            ("output_dtype", "output"),
        ]  # noqa: E501
        how = "dtype letter (s fp32, h fp16, t bf16, q fp8 e4m3, o fp4)"
    elif len(letters) == 4:
        roles = [
            ("a_dtype", "A input"),
            ("b_dtype", "B input"),
            ("compute_dtype", "compute"),
            ("output_dtype", "output"),
        ]  # noqa: E501
        how = "dtype letter, 4-letter form read by analogy with the 3-letter form"
    else:
        roles = [
            ("a_dtype", "A input"),
            ("b_dtype", "B input"),
            ("c_dtype", "C input"),
            ("compute_dtype", "compute"),
            ("output_dtype", "output"),
        ]
        how = "dtype letter, 5-letter form read by analogy with the 3-letter form"
    out = []
    for (fname, role), letter in zip(roles, letters, strict=True):
        if letter in _NVJET_DTYPES:
            out.append(_f(fname, _NVJET_DTYPES[letter], f"{role} {how}", INFERRED))
        else:
            out.append(
                _f(fname, letter, f"{role} dtype letter {letter!r} is not documented", UNKNOWN)
            )  # noqa: E501
    return out


def _parse_nvjet(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    if not b.startswith("nvjet_"):
        return None
    m = _NVJET.match(b)
    if m is None:
        return "nvjet", [_f("unparsed", b[6:], "nvjet name outside the known grammar", UNKNOWN)]
    arch, letters, tf32, tm, tn, kb, st, cm, cn, flags, ops = m.groups()
    fields = [
        _f("kernel", "nvjet", "cuBLASLt GEMM/GEMV kernel family (Hopper/Blackwell)", CONFIRMED)
    ]  # noqa: E501
    if arch:
        fields.append(_f("arch", arch, "architecture tag (appears with cuBLAS 13)", CONFIRMED))
    fields.append(_f("dtypes", letters, "dtype letters: inputs, compute, output", INFERRED))
    fields += _nvjet_dtype_fields(letters)
    if tf32:
        fields.append(_f("tf32", "tf32", "TF32 compute mode", INFERRED))
    fields.append(_f("tile_mn", f"{tm}x{tn}", "CTA tile M x N", INFERRED))
    fields.append(
        _f("k_block", kb, "K-block (a public guide reads 64x4 as threads per block)", INFERRED)
    )
    fields.append(_f("stages", st, "pipeline stages", INFERRED))
    fields.append(
        _f("cluster", f"{cm}x{cn}", "cluster shape (a public guide reads it as warps)", INFERRED)
    )  # noqa: E501
    for tok in flags.split("_")[1:] if flags else []:
        if tok in _NVJET_FLAGS:
            fname, meaning, conf = _NVJET_FLAGS[tok]
            fields.append(_f(fname, tok, meaning, conf))
            continue
        bm = _NVJET_BLOCKSCALE.match(tok)
        if bm:
            operand, vec, scale = bm.groups()
            mode = {("32", "UE8M0"): "MXFP8", ("16", "UE4M3"): "NVFP4"}.get((vec, scale))
            if mode:
                fields.append(
                    _f(
                        f"block_scale_{operand.lower()}",
                        tok,
                        f"{mode} block scaling of {operand} ({vec}-element blocks, {scale} scales)",
                        CONFIRMED,
                    )  # noqa: E501
                )
            else:
                fields.append(
                    _f(
                        f"block_scale_{operand.lower()}",
                        tok,
                        "block-scaling mode (combination not documented)",
                        UNKNOWN,
                    )
                )  # noqa: E501
            continue
        fields.append(_f("flag", tok, "nvjet flag not documented", UNKNOWN))
    fields.append(_f("layout", ops, "operation letters", INFERRED))
    fields.append(_f("op_a", ops[0], "op(A): T transposed, N not", INFERRED))
    fields.append(_f("op_b", ops[1], "op(B): T transposed, N not", INFERRED))
    fields.append(_f("op_3", ops[2], "third operation letter: meaning unpublished", UNKNOWN))
    return "nvjet", fields


# -- token tables for xmma / cublas_arch / cudnn / cutlass ---------------------------------
_TYPE_TOKEN = re.compile(
    r"bf16|tf32|fp16|fp32|fp64|f16|f32|f64|e4m3|e5m2|fp8|int8|s8|u8|i8|s32|i32|f8"
)  # noqa: E501
_TILE3 = re.compile(r"^(\d+)x(\d+)x(\d+)$")
_TILE2 = re.compile(r"^(\d+)x(\d+)$")
_INST_SHAPES = {
    "16816": "16x8x16",
    "1688": "16x8x8",
    "884": "8x8x4",
    "161616": "16x16x16",
    "16832": "16x8x32",
    "16864": "16x8x64",
    "8816": "8x8x16",
    "8832": "8x8x32",
    "1684": "16x8x4",
}
_SHORT_TYPES = {
    "s": "fp32",
    "h": "fp16",
    "d": "fp64",
    "i": "int32",
    "c": "complex fp32",
    "z": "complex fp64",
    "gc": "complex fp32 (Gaussian)",
    "gz": "complex fp64 (Gaussian)",
    "bf16": "bf16",
    "tf32": "tf32",
    "f16": "fp16",
    "f32": "fp32",
    "f64": "fp64",
}
_CORE_OPS = ("spgemm", "gemm", "fprop", "dgrad", "wgrad", "deconv")


def _split_types(tok: str) -> list[str] | None:
    found = _TYPE_TOKEN.findall(tok)
    return found if found and "".join(found) == tok else None


def _split_core(tok: str) -> tuple[str, str, str] | None:
    """``s16816gemm`` -> ('s', '16816', 'gemm'); ``sgemm`` -> ('s', '', 'gemm')."""
    if len(tok) > 64:
        return None
    for op in _CORE_OPS:
        if tok.endswith(op):
            pre = tok[: -len(op)]
            i = len(pre)
            while i and pre[i - 1].isdigit():
                i -= 1
            letters, digits = pre[:i], pre[i:]
            if letters and not letters.isalpha():
                return None
            return letters, digits, op
    return None


def _core_fields(tok: str, conf: str) -> list[Field] | None:
    sp = _split_core(tok)
    if sp is None:
        return None
    letters, digits, op = sp
    out = [
        _f(
            "op",
            op,
            {
                "gemm": "GEMM",
                "spgemm": "sparse GEMM",
                "fprop": "convolution forward",
                "dgrad": "convolution data gradient",
                "wgrad": "convolution weight gradient",
                "deconv": "transposed convolution",
            }[op],
            conf,
        )
    ]  # noqa: E501
    if letters:
        out.append(
            _f(
                "accumulator",
                _SHORT_TYPES.get(letters, letters),
                "accumulator/math type letter",
                conf if letters in _SHORT_TYPES else UNKNOWN,
            )
        )  # noqa: E501
    if digits:
        shape = _INST_SHAPES.get(digits)
        out.append(
            _f(
                "mma_shape",
                shape or digits,
                "tensor-core instruction shape",
                conf if shape else UNKNOWN,
            )
        )  # noqa: E501
    elif letters:
        out.append(_f("math", "simt", "no instruction shape: SIMT (CUDA cores)", INFERRED))
    return out


# -- cuBLAS / cuDNN xmma -------------------------------------------------------------------
_XMMA = re.compile(r"^sm(\d+)_xmma_")


def _parse_xmma(c: _Ctx) -> tuple[str, list[Field]] | None:
    m = _XMMA.match(c.base)
    if not m:
        return None
    body = c.base[m.end() :]
    library = None
    if "__" in body:
        body, library = body.rsplit("__", 1)
    toks = body.split("_")
    fields = [_f("arch", f"sm{m.group(1)}", "target architecture", INFERRED)]
    i = 0
    if toks and toks[0] in ("gemm", "fprop", "dgrad", "wgrad", "deconv"):
        op = toks[0]
        fields.append(
            _f(
                "op",
                op,
                {
                    "gemm": "GEMM",
                    "fprop": "convolution forward",
                    "dgrad": "convolution data gradient",
                    "wgrad": "convolution weight gradient",
                    "deconv": "transposed convolution",
                }[op],
                INFERRED,
            )
        )  # noqa: E501
        i = 1
    while i < len(toks) and toks[i] in ("implicit", "gemm", "indexed", "precomputed"):
        fields.append(_f("algorithm", toks[i], "convolution algorithm detail", INFERRED))
        i += 1
    roles = [
        ("ab_types", "A/B types"),
        ("c_acc_types", "C and accumulator types"),
        ("alpha_type", "alpha/beta (epilogue scale) type"),
    ]  # noqa: E501
    r = 0
    while i < len(toks) and r < len(roles) and _split_types(toks[i]):
        fields.append(_f(roles[r][0], toks[i], roles[r][1], INFERRED))
        i += 1
        r += 1
    if i < len(toks) and re.fullmatch(r"[nt]{2}", toks[i]):
        fields.append(_f("layout_ab", toks[i], "A/B layout (n/t)", INFERRED))
        i += 1
        if i < len(toks) and toks[i] in ("n", "t"):
            fields.append(_f("layout_c", toks[i], "C layout", INFERRED))
            i += 1
    elif i < len(toks) and re.fullmatch(r"n[a-z]{3,7}", toks[i]):
        fields.append(
            _f("layout_in", toks[i], "activation/filter layouts (e.g. nhwc + krsc)", INFERRED)
        )  # noqa: E501
        i += 1
        if i < len(toks) and toks[i] in ("nhwc", "nchw", "ncdhw", "ndhwc"):
            fields.append(_f("layout_out", toks[i], "output layout", INFERRED))
            i += 1
    rest = toks[i:]
    j = 0
    while j < len(rest):
        t = rest[j]
        if t.startswith("tilesize"):
            fields.append(_f("tile", t[8:], "CTA tile M x N x K", INFERRED))
        elif re.fullmatch(r"stage\d+", t):
            fields.append(_f("stages", t[5:], "pipeline stages", INFERRED))
        elif t.startswith("warpgroupsize"):
            fields.append(_f("warpgroups", t[13:], "warp-group shape", INFERRED))
        elif t.startswith("warpsize"):
            fields.append(_f("warps", t[8:], "warp shape", INFERRED))
        elif re.fullmatch(r"tensor\d+x\d+x\d+", t):
            fields.append(_f("mma_shape", t[6:], "tensor-core instruction shape", INFERRED))
        elif t == "ffma":
            fields.append(_f("math", "ffma", "FFMA: no tensor cores", INFERRED))
        elif re.fullmatch(r"align[a-z]*\d+", t):
            fields.append(_f("alignment", t, "operand alignment (elements)", INFERRED))
        elif t == "execute":
            k = j + 1
            while k < len(rest) and rest[k] != "kernel":
                k += 1
            mode = "_".join(rest[j + 1 : k])
            if mode == "split_k":
                fields.append(_f("split_k", "split_k", "execute_split_k_kernel: split-K", INFERRED))  # noqa: E501
            elif mode:
                fields.append(
                    _f(
                        "execute_mode",
                        mode,
                        "execution mode (segment-K etc.): not documented",
                        UNKNOWN,
                    )
                )  # noqa: E501
            if k + 1 < len(rest) and library is None:
                library = "_".join(rest[k + 1 :])
            j = len(rest) if k + 1 < len(rest) else k
        elif t == "kernel":
            pass
        else:
            fields.append(_f("flag", t, "xmma token not documented", UNKNOWN))
        j += 1
    if library:
        fields.append(_f("library", library, "shipping library tag (cuBLAS / cuDNN)", INFERRED))
    family = "cudnn" if library and "cudnn" in library else "cublas_xmma"
    return family, fields


# -- legacy cuBLAS arch-prefixed names -----------------------------------------------------
_ARCHES = ("maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell")
_ARCH_PREFIX = re.compile(r"^(maxwell|pascal|volta|turing|ampere|ada|hopper|blackwell)_")


def _generic_tokens(toks: list[str], fields: list[Field], conf: str) -> None:
    """Tile / layout / common tokens shared by the legacy cuBLAS and cuDNN names."""
    j = 0
    while j < len(toks):
        t = toks[j]
        core = _core_fields(t, conf) if _split_core(t) else None
        if core:
            fields.extend(core)
        elif t == "scudnn" or t == "hcudnn":
            fields.append(
                _f("math", t, "cuDNN SIMT (s: fp32, h: fp16) convolution kernel", INFERRED)
            )  # noqa: E501
        elif _TILE2.match(t) and not any(f.name == "tile" for f in fields):
            fields.append(_f("tile", t, "CTA tile M x N", conf))
        elif t == "stages" and j + 1 < len(toks) and _TILE2.match(toks[j + 1]):
            kb, st = toks[j + 1].split("x")
            fields.append(_f("k_block", kb, "K-block", conf))
            fields.append(_f("stages", st, "pipeline stages", conf))
            j += 1
        elif re.fullmatch(r"sliced\d+x\d+", t):
            fields.append(
                _f("sliced", t[6:], "sliced-K inside a CTA (fixed summation order)", INFERRED)
            )  # noqa: E501
        elif re.fullmatch(r"ldg\d+", t):
            fields.append(_f("ldg", t[3:], "global load width (elements)", INFERRED))
        elif t in ("nn", "nt", "tn", "tt"):
            fields.append(_f("layout", t, "op(A) op(B): n normal, t transposed", INFERRED))
        elif t in ("nhwc", "nchw", "ndhwc", "ncdhw"):
            fields.append(_f("layout", t, "tensor layout", INFERRED))
        elif t == "splitK":
            fields.append(_f("split_k", t, "split-K", INFERRED))
        elif t == "relu":
            fields.append(_f("epilogue", t, "fused ReLU epilogue", INFERRED))
        elif t == "winograd":
            fields.append(_f("algorithm", t, "Winograd convolution", INFERRED))
        elif t in ("fprop", "dgrad", "wgrad"):
            fields.append(_f("op", t, "convolution direction", INFERRED))
        elif t in ("3dconv",):
            fields.append(_f("algorithm", t, "3-D convolution", INFERRED))
        elif _split_types(t):
            fields.append(_f("dtype", t, "data type", conf))
        elif re.fullmatch(r"v\d+", t) and j == len(toks) - 1:
            fields.append(_f("version", t, "kernel version suffix", INFERRED))
        else:
            fields.append(_f("flag", t, "token not documented", UNKNOWN))
        j += 1


def _parse_cublas_arch(c: _Ctx) -> tuple[str, list[Field]] | None:
    m = _ARCH_PREFIX.match(c.base)
    if not m:
        return None
    toks = c.base[m.end() :].split("_")
    if not any(_split_core(t) for t in toks):
        return None
    fields = [_f("arch", m.group(1), "architecture generation", INFERRED)]
    _generic_tokens(toks, fields, INFERRED)
    return "cublas_arch", fields


# -- cuDNN ------------------------------------------------------------------------------------
_CUDNN_LEGACY = re.compile(
    r"^cudnn_(?:(infer|train)_)?(?:(maxwell|pascal|volta|turing|ampere|ada|hopper|blackwell)_)?"
)  # noqa: E501


def _cudnn_namespace(q: str) -> bool:
    ns, sep, _ = q.partition("::")
    return bool(sep) and (
        ns == "cudnn"
        or ns.startswith(("cask_cudnn", "cutlass_cudnn"))
        or (ns.startswith("cutlass__") and "cudnn" in ns)
    )


def _parse_cudnn(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if b.startswith("cudnn_generated_fort_native_sdpa"):
        toks = b[len("cudnn_generated_fort_native_sdpa") :].strip("_").split("_")
        fields = [
            _f("op", "sdpa", "cuDNN fused scaled-dot-product attention (generated)", INFERRED)
        ]  # noqa: E501
        j = 0
        while j < len(toks):
            t = toks[j]
            if re.fullmatch(r"sm\d+[a-z]?", t):
                fields.append(_f("arch", t, "target architecture", INFERRED))
            elif t == "flash":
                fields.append(_f("algorithm", t, "flash-style attention", INFERRED))
            elif t in ("fprop", "bprop"):
                fields.append(
                    _f(
                        "direction",
                        "fwd" if t == "fprop" else "bwd",
                        f"{t}: forward/backward",
                        INFERRED,
                    )
                )  # noqa: E501
            elif t == "knob" and j + 1 < len(toks):
                fields.append(_f("knob", toks[j + 1], "engine knob: meaning unpublished", UNKNOWN))  # noqa: E501
                j += 1
            elif _TILE3.match(t) and not any(f.name == "tile" for f in fields):
                fields.append(_f("tile", t, "tile shape", INFERRED))
            elif t.startswith("cga") and _TILE3.match(t[3:]):
                fields.append(_f("cluster", t[3:], "CGA (cluster) shape", INFERRED))
            elif _split_types(t):
                fields.append(_f("dtype", t, "data type", INFERRED))
            else:
                fields.append(_f("flag", t, "token not documented", UNKNOWN))
            j += 1
        return "cudnn", fields
    m = _CUDNN_LEGACY.match(b)
    if m and b != "cudnn":
        fields = [_f("library", "cudnn", "cuDNN kernel", CONFIRMED)]
        if m.group(1):
            fields.append(_f("variant", m.group(1), "cuDNN sub-library (infer/train)", INFERRED))
        if m.group(2):
            fields.append(_f("arch", m.group(2), "architecture generation", INFERRED))
        _generic_tokens([t for t in b[m.end() :].split("_") if t], fields, INFERRED)
        return "cudnn", fields
    if _cudnn_namespace(q):
        fields = [_f("namespace", q.split("::", 1)[0], "cuDNN namespace", CONFIRMED)]
        inner = _first_cutlass_arg(c.normalized)
        if inner:
            sub = _cutlass2_fields(inner, INFERRED)
            if sub is not None:
                fields.append(
                    _f("cutlass_kernel", inner, "CUTLASS kernel compiled into cuDNN", CONFIRMED)
                )  # noqa: E501
                fields += sub
        return "cudnn", fields
    if b.startswith(
        ("wgrad_alg", "dgrad_alg", "fft2d_", "fft3d_", "implicit_convolve", "explicit_convolve")
    ) or b.startswith("bn_"):  # noqa: E501
        return "cudnn", [_f("kernel", b, "cuDNN convolution/normalization helper kernel", INFERRED)]  # noqa: E501
    return None


# -- CUTLASS 2.x ------------------------------------------------------------------------------
_CUTLASS_ARG = re.compile(r"<\s*(cutlass_\w+)")


def _first_cutlass_arg(n: str) -> str | None:
    m = _CUTLASS_ARG.search(n)
    return m.group(1) if m else None


def _cutlass2_fields(name: str, conf: str) -> list[Field] | None:
    toks = name.split("_")
    if not toks or toks[0] != "cutlass" or len(toks) < 3:
        return None
    fields: list[Field] = []
    i = 1
    if toks[i].isdigit():
        fields.append(
            _f("arch", f"sm{toks[i]}", "SM number in cuBLAS/cuDNN-internal CUTLASS names", INFERRED)
        )  # noqa: E501
        conf = INFERRED
        i += 1
    opclass = []
    while i < len(toks) and toks[i] in ("tensorop", "simt", "wmma", "sptensorop", "spsimt"):
        opclass.append(toks[i])
        i += 1
    if not opclass:
        return None
    fields.append(
        _f("opcode_class", "_".join(opclass), "opcode class (tensor cores / SIMT / WMMA)", conf)
    )  # noqa: E501
    pre: list[str] = []
    while i < len(toks) and _split_core(toks[i]) is None:
        pre.append(toks[i])
        i += 1
    if i >= len(toks):
        return None
    for t in pre:
        fields.append(
            _f("c_type", t, "C/output type (shown when it differs from the accumulator)", conf)
        )  # noqa: E501
    fields.extend(_core_fields(toks[i], conf) or [])
    i += 1
    while i < len(toks) and not _TILE2.match(toks[i]):
        t = toks[i]
        if t in ("optimized", "analytic", "few_channels", "fixed_channels"):
            fields.append(_f("iterator", t, "convolution iterator algorithm", conf))
        elif t in ("relu", "gelu", "bias"):
            fields.append(_f("epilogue", t, "fused epilogue", INFERRED))
        elif _split_types(t):
            fields.append(
                _f("a_type", t, "A type (shown when it differs from the accumulator)", conf)
            )  # noqa: E501
        else:
            fields.append(_f("flag", t, "token not documented", UNKNOWN))
        i += 1
    if i < len(toks):
        fields.append(_f("tile_mn", toks[i], "threadblock tile M x N", conf))
        i += 1
    if i < len(toks) and _TILE2.match(toks[i]):
        kb, st = toks[i].split("x")
        fields.append(_f("k_block", kb, "threadblock tile K", conf))
        fields.append(_f("stages", st, "pipeline stages", conf))
        i += 1
    for t in toks[i:]:
        if t in ("nn", "nt", "tn", "tt") or t in ("nhwc", "nchw", "ndhwc", "ncdhw"):
            fields.append(_f("layout", t, "operand layouts (n column-major, t row-major)", conf))
        elif re.fullmatch(r"align\d+", t):
            fields.append(_f("alignment", t[5:], "max operand alignment (elements)", conf))
        else:
            fields.append(_f("flag", t, "token not documented", UNKNOWN))
    return fields


def _parse_cutlass2(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if b.startswith("cutlass_") and not b.startswith("cutlass3x_"):
        fields = _cutlass2_fields(b, CONFIRMED)
        if fields is not None:
            return "cutlass2", fields
    if q.endswith(("::Kernel", "::Kernel2")):
        inner = _first_cutlass_arg(c.normalized)
        if inner:
            fields = _cutlass2_fields(inner, INFERRED) or []
            wrapper = q
            return "cutlass2", [
                _f("wrapper", wrapper, "CUTLASS 2 kernel entry point", CONFIRMED),
                _f("cutlass_kernel", inner, "CUTLASS procedural name", CONFIRMED),
                *fields,
            ]
    return None


# -- CUTLASS 3.x ------------------------------------------------------------------------------
def _parse_cutlass3(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    if not b.startswith("cutlass3x_"):
        return None
    toks = b.split("_")[1:]
    conf = CONFIRMED
    fields: list[Field] = []
    i = 0
    if i < len(toks) and re.fullmatch(r"sm\d+[a-z]?", toks[i]):
        fields.append(_f("arch", toks[i], "target architecture", conf))
        i += 1
    if i < len(toks):
        fields.append(_f("opcode_class", toks[i], "opcode class", conf))
        i += 1
    if i < len(toks):
        core = toks[i]
        m = re.fullmatch(r"([a-z]?)(\d+x\d+x\d+)?([a-z]*gemm|fprop|dgrad|wgrad)", core)
        if m:
            if m.group(1):
                fields.append(
                    _f(
                        "accumulator",
                        _SHORT_TYPES.get(m.group(1), m.group(1)),
                        "accumulator type letter",
                        conf,
                    )
                )  # noqa: E501
            if m.group(2):
                fields.append(_f("mma_shape", m.group(2), "instruction shape", conf))
            fields.append(_f("op", m.group(3), "operation kind", conf))
        else:
            fields.append(_f("op", core, "operation kind", conf))
        i += 1
    types: list[str] = []
    while i < len(toks) and not _TILE3.match(toks[i]):
        types.append(toks[i])
        i += 1
    if len(types) == 5:
        for (fname, meaning), t in zip(
            [
                ("a_type", "A type"),
                ("b_type", "B type"),
                ("acc_type", "accumulator type"),
                ("c_type", "C type (void: no C source)"),
                ("d_type", "D (output) type"),
            ],  # noqa: E501
            types,
            strict=True,
        ):
            fields.append(_f(fname, t, meaning, conf))
    else:
        for t in types:
            fields.append(_f("type", t, "data type token", INFERRED))
    if i < len(toks) and _TILE3.match(toks[i]):
        fields.append(_f("tile", toks[i], "CTA tile M x N x K", conf))
        i += 1
    if i < len(toks) and _TILE3.match(toks[i]):
        fields.append(_f("cluster", toks[i], "cluster shape", conf))
        i += 1
    if i < len(toks) and toks[i].isdigit():
        fields.append(_f("stages", toks[i], "pipeline stages (0: chosen automatically)", conf))
        i += 1
    if i < len(toks) and re.fullmatch(r"[ntx]{3}", toks[i]):
        fields.append(_f("layout", toks[i], "A, B, C layouts (n column-major, t row-major)", conf))  # noqa: E501
        i += 1
    if i < len(toks) and re.fullmatch(r"align\d+", toks[i]):
        fields.append(_f("alignment", toks[i][5:], "max A/B alignment (elements)", conf))
        i += 1
    rest = toks[i:]
    # "_stream_k" follows align<N> in cutlass_library; accept it anywhere in the tail.
    for j in range(len(rest) - 1):
        if rest[j : j + 2] == ["stream", "k"]:
            fields.append(_f("tile_scheduler", "stream_k", "stream-K tile scheduler", conf))
            rest = rest[:j] + rest[j + 2 :]
            break
    if "epi" in rest:
        k = rest.index("epi")
        kernel, epi = rest[:k], rest[k:]
    else:
        kernel, epi = rest, []
    if kernel:
        fields.append(_f("kernel_schedule", "_".join(kernel), "kernel schedule", conf))
    if epi:
        fields.append(_f("epilogue_schedule", "_".join(epi), "epilogue schedule", conf))
    return "cutlass3", fields


def _parse_cute(c: _Ctx) -> tuple[str, list[Field]] | None:
    if c.qual != "cutlass::device_kernel":
        return None
    args = _args_after(c.normalized, "cutlass::device_kernel<")
    fields = []
    if args:
        op = _strip_templates(args[0]) or args[0]
        fields.append(
            _f("operator", op, "CUTLASS 3 / CuTe operator class the kernel runs", CONFIRMED)
        )  # noqa: E501
    return "cute_device_kernel", fields


# -- FlashAttention --------------------------------------------------------------------------
def _fa2_traits(n: str, fields: list[Field]) -> None:
    for marker in ("Flash_fwd_kernel_traits<", "Flash_bwd_kernel_traits<"):
        args = _args_after(n, marker)
        if args:
            names = ["head_dim", "block_m", "block_n", "warps"]
            for fname, a in zip(names, args, strict=False):
                if a.lstrip("-").isdigit():
                    fields.append(
                        _f(
                            fname,
                            a,
                            f"{fname.replace('_', ' ')} from the kernel traits ({_FA2_SRC})",
                            INFERRED,
                        )
                    )  # noqa: E501
            if marker.startswith("Flash_fwd") and len(args) >= 7:
                fields.append(_f("dtype", _cpp_dtype(args[6]), "element type", INFERRED))
            return


def _parse_fa2(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    if not (b.startswith(("flash_fwd", "flash_bwd"))):
        return None
    fields: list[Field] = []
    ns = c.qual.rsplit("::", 1)[0] if "::" in c.qual else ""
    if ns:
        fields.append(
            _f("namespace", ns, "build namespace (pytorch_flash: PyTorch SDPA's copy)", INFERRED)
        )  # noqa: E501
    direction = "fwd" if b.startswith("flash_fwd") else "bwd"
    fields.append(_f("direction", direction, "forward / backward", CONFIRMED))
    if "splitkv_combine" in b:
        fields.append(
            _f(
                "variant",
                "splitkv_combine",
                "merges split-KV partial results (log-sum-exp combine)",
                CONFIRMED,
            )
        )  # noqa: E501
    elif "splitkv" in b:
        fields.append(
            _f(
                "variant",
                "splitkv",
                "split-KV kernel; the name alone does not prove the KV was split",
                CONFIRMED,
            )
        )  # noqa: E501
    elif direction == "bwd":
        fields.append(
            _f(
                "variant",
                b.removeprefix("flash_bwd_").removesuffix("_kernel") or b,
                "backward stage",
                CONFIRMED,
            )
        )  # noqa: E501
    _fa2_traits(c.normalized, fields)
    args = _args_after(c.normalized, b + "<")
    if args and len(args) > 1:
        rest = args[1:]
        if b == "flash_fwd_kernel" and len(rest) == 8:
            names = _BOOL_NAMES_FA2_FWD
        elif b == "flash_fwd_splitkv_kernel" and len(rest) == 8:
            names = _BOOL_NAMES_FA2_SPLITKV
        elif b == "flash_fwd_splitkv_combine_kernel" and len(rest) == 3:
            names = ("combine_block_m", "log_max_splits", "is_even_k")
        else:
            names = ()
        if not names:
            # A template shape we don't know (another FlashAttention version): report the
            # raw parameters as unknown rather than drop or mislabel them.
            for i, v in enumerate(rest, start=1):
                fields.append(_unknown_token(v, f"template parameter {i}"))
        for fname, v in zip(names, rest, strict=False):
            meaning = f"template parameter {fname} ({_FA2_SRC})"
            if fname == "split":
                meaning = f"num_splits > 1: the KV really was split ({_FA2_SRC})"
            elif fname == "log_max_splits":
                meaning = f"log2 of the maximum number of splits merged ({_FA2_SRC})"
            fields.append(_f(fname, v, meaning, INFERRED))
    return "flash_attention_2", fields


_FA3_MARKERS = (
    ("FlashAttnFwdCombine", "fwd", "combine"),
    ("FlashAttnFwdSm90", "fwd", "main"),
    ("FlashAttnBwdSm90", "bwd", "main"),
    ("FlashAttnBwdPreprocess", "bwd", "preprocess"),
    ("FlashAttnBwdPostprocessConvertdQ", "bwd", "postprocess_convert_dq"),
    ("FlashAttnFwdSm80", "fwd", "main_sm80"),
    ("FlashAttnBwdSm80", "bwd", "main_sm80"),
    ("prepare_varlen_num_blocks", "fwd", "prepare_varlen_num_blocks"),
)
_FA4_MARKERS = (
    ("FlashAttentionForwardSm100", "fwd"),
    ("FlashAttentionBackwardSm100", "bwd"),
    ("FlashAttnFwdSm100", "fwd"),
    ("FlashAttnBwdSm100", "bwd"),
)


# Upstream hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp: the 12 bools after ArchTag.
_FA3_BOOLS = (
    "is_causal",
    "is_local",
    "has_softcap",
    "varlen",
    "paged_kv_non_tma",
    "append_kv",
    "has_qv",
    "mma_pv_is_rs",
    "intra_wg_overlap",
    "pack_gqa",
    "split",
    "v_colmajor",
)
_FA3_REPORTED = frozenset(
    {"is_causal", "is_local", "varlen", "paged_kv_non_tma", "pack_gqa", "split"}
)


def _parse_fa3(c: _Ctx) -> tuple[str, list[Field]] | None:
    n = c.normalized
    for marker, direction in _FA4_MARKERS:
        if marker in n:
            return "flash_attention_4", [
                _f("direction", direction, "forward / backward", CONFIRMED)
            ]  # noqa: E501
    for marker, direction, part in _FA3_MARKERS:
        if marker not in n:
            continue
        if marker == "prepare_varlen_num_blocks" and "flash" not in c.qual and c.base != marker:
            continue
        fields = [
            _f("direction", direction, "forward / backward", CONFIRMED),
            _f("component", part, "FlashAttention-3 kernel", CONFIRMED),
        ]
        if part == "combine":
            fields.append(_f("variant", "combine", "merges split-KV partial results", CONFIRMED))
        args = _args_after(n, "CollectiveMainloopFwdSm90<")
        if args:
            src = "upstream FlashAttention-3 mainloop template order; versions differ"
            if args[0].isdigit():
                fields.append(_f("stages", args[0], f"pipeline stages ({src})", INFERRED))
            if len(args) > 1 and (cl := _cute_shape(args[1])):
                fields.append(_f("cluster", cl, f"cluster shape ({src})", INFERRED))
            if len(args) > 2 and (tile := _cute_shape(args[2])):
                parts = tile.split("x")
                fields.append(_f("tile", tile, f"kBlockM x kBlockN x head dim ({src})", INFERRED))
                if len(parts) == 3:
                    fields.append(_f("head_dim", parts[2], f"head dimension ({src})", INFERRED))
            if len(args) > 3 and args[3].isdigit():
                fields.append(_f("head_dim_v", args[3], f"head dimension of V ({src})", INFERRED))  # noqa: E501
            if len(args) > 4:
                fields.append(_f("dtype", _cpp_dtype(args[4]), f"element type ({src})", INFERRED))  # noqa: E501
            bools = []
            for a in args[7:]:
                if a not in ("true", "false"):
                    break
                bools.append(a)
            if len(bools) == len(_FA3_BOOLS):
                for fname, v in zip(_FA3_BOOLS, bools, strict=True):
                    if fname in _FA3_REPORTED:
                        fields.append(_f(fname, v, f"template flag {fname} ({src})", INFERRED))
            elif bools:
                fields.append(
                    _f(
                        "flags",
                        "".join("1" if v == "true" else "0" for v in bools),
                        f"{len(bools)} boolean template flags; not the upstream count ({len(_FA3_BOOLS)}), so their order is unknown",
                        UNKNOWN,
                    )  # noqa: E501
                )
        return "flash_attention_3", fields
    return None


# -- xFormers / PyTorch memory-efficient attention -------------------------------------------
def _parse_xformers(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    m = re.match(r"^fmha_cutlass([FB])_", b)
    if not m:
        return None
    fields = [
        _f("direction", "fwd" if m.group(1) == "F" else "bwd", "F forward, B backward", CONFIRMED)
    ]  # noqa: E501
    for t in b[m.end() :].split("_"):
        if _split_types(t):
            fields.append(_f("dtype", t, "data type", INFERRED))
        elif t in ("aligned", "notaligned"):
            fields.append(_f("alignment", t, "inputs aligned for vector loads", INFERRED))
        elif _TILE2.match(t):
            fields.append(_f("tile", t, "queries x keys per CTA", INFERRED))
        elif re.fullmatch(r"k\d+", t):
            fields.append(_f("max_head_dim", t[1:], "maximum head dimension", INFERRED))
        elif t in ("rf", "gmem"):
            fields.append(
                _f(
                    "accumulator",
                    t,
                    "output accumulated in registers (rf) or global memory (gmem)",
                    INFERRED,
                )
            )  # noqa: E501
        elif t == "dropout":
            fields.append(_f("dropout", "true", "dropout variant", INFERRED))
        elif re.fullmatch(r"sm\d+", t):
            fields.append(_f("arch", t, "minimum architecture", INFERRED))
        else:
            fields.append(_f("flag", t, "token not documented", UNKNOWN))
    return "xformers", fields


# -- TensorRT-LLM -----------------------------------------------------------------------------
_TRT_FMHA = re.compile(r"^fmha(Sm\d+[a-z]?)Kernel(?:_(\w+))?$")
_TRT_PIECES = (
    (re.compile(r"Qkv([A-Z][a-z0-9]+)"), "qkv_dtype", "Q/K/V data type"),
    (re.compile(r"O([A-Z][a-z0-9]+)"), "o_dtype", "output data type"),
    (re.compile(r"H(\d+)"), "head_dim", "head dimension"),
    (re.compile(r"(PagedKv|ContiguousKv|SeparateQkv|PackedQkv)"), "kv_layout", "KV-cache layout"),
    (
        re.compile(r"(SlidingOrChunkedCausal|Causal|Dense|Custom|Bidirectional)"),
        "mask",
        "attention mask",
    ),  # noqa: E501
    (re.compile(r"P(\d+)"), "p_token", "P<n>: meaning unpublished"),
    (re.compile(r"(VarSeq)"), "var_seq", "variable sequence lengths"),
    (re.compile(r"Q(\d+)"), "tile_q", "query tile"),
    (re.compile(r"Kv(\d+)"), "tile_kv", "KV tile"),
    (re.compile(r"(Persistent|Static)"), "scheduling", "persistent or static scheduling"),
    (
        re.compile(r"(Context|Generation|Gen|SwapsMmaAb\w*)"),
        "phase",
        "context (prefill) or generation",
    ),  # noqa: E501
)


def _parse_trtllm(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    m = _TRT_FMHA.match(b)
    if m:
        fields = [
            _f("arch", m.group(1), "target architecture", INFERRED),
            _f("op", "fmha", "fused multi-head attention", INFERRED),
        ]  # noqa: E501
        rest = m.group(2) or ""
        pos = 0
        for rx, fname, meaning in _TRT_PIECES:
            mm = rx.match(rest, pos)
            if mm:
                conf = UNKNOWN if fname == "p_token" else INFERRED
                fields.append(_f(fname, mm.group(1), meaning, conf))
                pos = mm.end()
        if pos < len(rest):
            fields.append(_f("unparsed", rest[pos:], "rest of the name: not documented", UNKNOWN))  # noqa: E501
        return "trtllm", fields
    if (
        b.startswith("bmm_")
        and b.endswith(("_sm100f", "_sm100a", "_sm103a", "_sm100"))
        or (b.startswith("bmm_") and "_cga" in b)
    ):
        fields = [_f("op", "bmm", "TensorRT-LLM generated batched GEMM", INFERRED)]
        toks = b.split("_")[1:]
        for j, t in enumerate(toks):
            if j == 0:
                fields.append(_f("output_dtype", t, "output data type", INFERRED))
            elif j == 1:
                fields.append(_f("ab_dtypes", t, "A/B data types (Mx: MX block-scaled)", INFERRED))  # noqa: E501
            elif j == 2:
                fields.append(_f("acc_dtype", t, "accumulator type", INFERRED))
            elif re.fullmatch(r"t\d+x\d+x\d+\w*", t):
                fields.append(
                    _f(
                        "tile",
                        re.match(r"t(\d+x\d+x\d+)", t).group(1),
                        "CTA tile M x N x K",
                        INFERRED,
                    )
                )  # noqa: E501
            elif re.fullmatch(r"s\d+", t):
                fields.append(_f("stages", t[1:], "pipeline stages", INFERRED))
            elif re.fullmatch(r"m\d+x\d+x\d+", t):
                fields.append(_f("mma_shape", t[1:], "MMA instruction shape", INFERRED))
            elif t.startswith("cga") and _TILE3.match(t[3:]):
                fields.append(_f("cluster", t[3:], "cluster shape", INFERRED))
            elif t in ("TN", "NT", "NN", "TT"):
                fields.append(_f("layout", t, "A/B layouts", INFERRED))
            elif re.fullmatch(r"sm\d+[a-z]?", t):
                fields.append(_f("arch", t, "target architecture", INFERRED))
            else:
                fields.append(_f("flag", t, "token not documented", UNKNOWN))
        return "trtllm", fields
    if q.startswith(("tensorrt_llm::", "moe::dev::", "trtllm")) or b.startswith("trtllm"):
        return "trtllm", [_f("kernel", b, "TensorRT-LLM kernel", INFERRED)]
    return None


# -- FlashInfer / vLLM / serving kernels -----------------------------------------------------
_FLASHINFER_PREFIXES = (
    "BatchPrefill",
    "BatchDecode",
    "SinglePrefill",
    "SingleDecode",
    "BatchMLA",
    "BatchPOD",
    "TopKTopP",
)


def _flashinfer_base(b: str) -> bool:
    # Plain substring tests: linear, unlike a regex with several unbounded \w* parts.
    return (
        b.startswith(_FLASHINFER_PREFIXES)
        or "MergeState" in b
        or "SamplingFromProb" in b
        or ("TopK" in b and "Sampling" in b)
    )


def _parse_flashinfer(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if not (q.startswith("flashinfer::") or _flashinfer_base(b)):
        return None
    fields: list[Field] = []
    lo = b.lower()
    if "prefill" in lo:
        fields.append(_f("phase", "prefill", "prefill attention", INFERRED))
    elif "decode" in lo:
        fields.append(_f("phase", "decode", "decode attention", INFERRED))
    if "mergestate" in lo:
        fields.append(
            _f(
                "op",
                "merge_states",
                "merges partial attention states (cascade / split-KV)",
                INFERRED,
            )
        )  # noqa: E501
    if "pagedkv" in lo:
        fields.append(_f("kv_layout", "paged", "paged KV cache", INFERRED))
    elif "raggedkv" in lo:
        fields.append(_f("kv_layout", "ragged", "ragged KV cache", INFERRED))
    if not q.startswith("flashinfer::"):
        fields.append(
            _f(
                "source",
                "flashinfer",
                "FlashInfer kernel by its name (no namespace in this form)",
                INFERRED,
            )
        )  # noqa: E501
    return "flashinfer", fields


_CUSTOM_AR = re.compile(
    r"(?:^|_)(?:cross_device_reduce|allreduce_fusion|all_reduce_fusion|multimem_all_reduce|"
    r"userbuffers|oneshot_all_?reduce|twoshot_all_?reduce|lamport)|^(?:oneShot|twoShot)AllReduce",
    re.IGNORECASE,
)


def _parse_custom_allreduce(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    if not _CUSTOM_AR.search(b):
        return None
    fields = [
        _f("op", "all_reduce", "custom (non-NCCL) all-reduce, chosen by message size", INFERRED)
    ]  # noqa: E501
    lo = b.lower()
    if "1stage" in lo or "oneshot" in lo:
        fields.append(_f("algorithm", "one_shot", "one-shot (1 stage)", INFERRED))
    elif "2stage" in lo or "twoshot" in lo:
        fields.append(
            _f("algorithm", "two_shot", "two-shot (reduce-scatter + all-gather)", INFERRED)
        )  # noqa: E501
    if "lamport" in lo:
        fields.append(_f("sync", "lamport", "Lamport-style flag synchronisation", INFERRED))
    if "fusion" in lo:
        fields.append(_f("fusion", "true", "all-reduce fused with neighbouring ops", INFERRED))
    return "custom_allreduce", fields


_VLLM_BASES = frozenset(
    """paged_attention_v1_kernel paged_attention_v2_kernel paged_attention_v2_reduce_kernel
    reshape_and_cache_kernel reshape_and_cache_flash_kernel concat_and_cache_mla_kernel
    merge_attn_states_kernel""".split()
)


def _parse_vllm(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if not (q.startswith("vllm::") or b in _VLLM_BASES):
        return None
    fields = [
        _f(
            "op",
            b.removesuffix("_kernel"),
            "vLLM kernel",
            CONFIRMED if q.startswith("vllm::") else INFERRED,
        )
    ]  # noqa: E501
    m = re.match(r"paged_attention_(v[12])", b)
    if m:
        fields.append(
            _f(
                "version",
                m.group(1),
                "v1 single pass; v2 partitions the sequence and reduces",
                INFERRED,
            )
        )  # noqa: E501
    if b == "merge_attn_states_kernel":
        fields.append(
            _f(
                "variant",
                "merge",
                "cascade-attention LSE merge of prefix and suffix results",
                INFERRED,
            )
        )  # noqa: E501
    return "vllm", fields


_SERVING_PREFIXES = (
    "rms_norm_kernel",
    "fused_add_rms_norm_kernel",
    "act_and_mul_kernel",
    "silu_and_mul",
    "gelu_and_mul",
    "rotary_embedding_kernel",
    "scaled_fp8_quant",
    "per_token_group_quant",
    "dynamic_per_token",
    "dynamic_scaled",
    "cutlass_scaled_mm",
    "Marlin",
    "marlin",
    "topkGatingSoftmax",
    "moe_align_block_size",
    "fused_moe_kernel",
    "count_and_sort_expert_tokens",
    "moe_sum",
    "grouped_topk",
    "RadixTopK",
    "_copy_page_indices",
    "fused_recurrent_",
    "chunk_gated_delta_rule",
    "argmax",
    "top_k_top_p",
)


def _parse_serving(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if q.startswith(("sgl_kernel::", "deep_gemm::", "sglang::")) or b.startswith(_SERVING_PREFIXES):
        return "llm_serving", [
            _f(
                "op",
                b,
                "LLM-serving kernel (vLLM/SGLang family); exact source not in the name",
                INFERRED,
            )
        ]  # noqa: E501
    return None


# -- NCCL ------------------------------------------------------------------------------------
_NCCL_ALGOS = (
    "COLLNET_DIRECT",
    "COLLNET_CHAIN",
    "NVLS_TREE",
    "NVLS",
    "TREE",
    "RING",
    "PAT",
    "COLLNET",
)  # noqa: E501
_NCCL_PROTOS = ("LL128", "LL", "SIMPLE")
_NCCL_NOTE = "the kernel's specialization, not necessarily the algorithm/protocol that ran"


def _nccl_take(toks: list[str], i: int, options: tuple[str, ...]) -> tuple[str | None, int]:
    for opt in options:
        parts = opt.split("_")
        if toks[i : i + len(parts)] == parts:
            return opt, i + len(parts)
    return None, i


def _parse_nccl(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    if b.startswith("ncclSymkDevKernel_"):
        toks = b[len("ncclSymkDevKernel_") :].split("_")
        if toks and toks[-1] == "profile":
            toks = toks[:-1]
        fields = [_f("collective", toks[0], "collective", CONFIRMED)] if toks else []
        algo = toks[1:]
        if toks and toks[0] in ("AllReduce", "ReduceScatter") and len(toks) >= 4:
            algo = toks[1:-2]
            fields.append(
                _f(
                    "algorithm",
                    "_".join(algo),
                    f"symmetric-memory algorithm ({_NCCL_NOTE})",
                    CONFIRMED,
                )
            )  # noqa: E501
            fields.append(_f("reduction", toks[-2], "reduction operator", CONFIRMED))
            fields.append(_f("dtype", toks[-1], "data type", CONFIRMED))
        elif algo:
            fields.append(
                _f(
                    "algorithm",
                    "_".join(algo),
                    f"symmetric-memory algorithm ({_NCCL_NOTE})",
                    CONFIRMED,
                )
            )  # noqa: E501
        return "nccl_symmetric", fields
    if b.startswith("ncclDevKernel_"):
        toks = b[len("ncclDevKernel_") :].split("_")
        fields = [_f("collective", toks[0], "collective", CONFIRMED)]
        i = 1
        if toks[0] in ("AllReduce", "Reduce", "ReduceScatter") and len(toks) >= 3:
            fields.append(_f("reduction", toks[1], "reduction operator", CONFIRMED))
            fields.append(_f("dtype", toks[2], "data type", CONFIRMED))
            i = 3
        algo, i = _nccl_take(toks, i, _NCCL_ALGOS)
        if algo:
            fields.append(_f("algorithm", algo, _NCCL_NOTE, CONFIRMED))
        proto, i = _nccl_take(toks, i, _NCCL_PROTOS)
        if proto:
            fields.append(_f("protocol", proto, _NCCL_NOTE, CONFIRMED))
        for t in toks[i:]:
            fields.append(_unknown_token(t, " in an NCCL kernel name"))
        return "nccl", fields
    if b.startswith("ncclKernel_"):
        toks = b[len("ncclKernel_") :].split("_")
        fields = [_f("collective", toks[0], "collective", CONFIRMED)]
        i = 1
        algo, i = _nccl_take(toks, i, _NCCL_ALGOS)
        if algo:
            fields.append(_f("algorithm", algo, _NCCL_NOTE, CONFIRMED))
        proto, i = _nccl_take(toks, i, _NCCL_PROTOS)
        if proto:
            fields.append(_f("protocol", proto, _NCCL_NOTE, CONFIRMED))
        if i < len(toks):
            fields.append(_f("reduction", toks[i], "reduction operator", CONFIRMED))
            i += 1
        if i < len(toks):
            fields.append(_f("dtype", "_".join(toks[i:]), "data type (C type name)", CONFIRMED))
        return "nccl_legacy", fields
    if b.startswith("nccl"):
        return "nccl", [_f("kernel", b, "NCCL kernel", CONFIRMED)]
    return None


# -- compiler generated ----------------------------------------------------------------------
_INDUCTOR = re.compile(r"^triton_(poi|red|per|tem|for|spl|unk)_(.*)$")
_INDUCTOR_OLD = re.compile(r"^triton__(\d[0-9a-z]*)$")
_INDUCTOR_KINDS = {
    "poi": "pointwise",
    "red": "reduction",
    "per": "persistent reduction",
    "tem": "template (e.g. mm, flex_attention)",
    "for": "foreach",
    "spl": "split scan",
    "unk": "unknown",
}
_MULTIWORD_OPS = (
    "bitwise_and bitwise_or bitwise_not bitwise_xor logical_and logical_or logical_not "
    "logical_xor native_layer_norm native_batch_norm native_group_norm _softmax _log_softmax "
    "log_softmax index_put index_select scatter_add scatter_reduce max_pool2d_with_indices "
    "avg_pool2d convolution_backward embedding_dense_backward flex_attention "
    "_scaled_dot_product_flash_attention _to_copy full_like zeros_like ones_like "
    "new_zeros new_ones new_empty scalar_tensor constant_pad_nd var_mean native_dropout "
    "threshold_backward gelu_backward silu_backward sigmoid_backward tanh_backward "
    "_softmax_backward_data nll_loss_forward nll_loss_backward clamp_min clamp_max "
    "index_add slice_scatter select_scatter as_strided_scatter unsafe_index masked_fill "
    "split_with_sizes"
).split()


def _split_inductor_ops(s: str) -> list[str]:
    toks = s.split("_")
    out: list[str] = []
    i = 0
    while i < len(toks):
        best = None
        for k in (4, 3, 2):
            cand = "_".join(toks[i : i + k])
            if i + k <= len(toks) and cand in _MULTIWORD_OPS:
                best = (cand, k)
                break
        if best:
            out.append(best[0])
            i += best[1]
        elif toks[i] == "" and out:
            out[-1] += "_"  # ``copy_`` (in-place) leaves an empty token
            i += 1
        else:
            if toks[i]:
                out.append(toks[i])
            i += 1
    return out


def _parse_inductor(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    m = _INDUCTOR.match(b)
    if m:
        kind, rest = m.groups()
        fields = [_f("kind", kind, _INDUCTOR_KINDS[kind], CONFIRMED)]
        idx = None
        head, sep, tail = rest.rpartition("_")
        if sep and tail.isdigit():
            rest, idx = head, tail
        elif rest.isdigit():
            rest, idx = "", rest
        ops = rest.removeprefix("fused").lstrip("_") if rest.startswith("fused") else rest
        if rest.startswith("fused"):
            fields.append(_f("fused", "true", "fused kernel; op names follow", CONFIRMED))
        if ops:
            fields.append(
                _f("ops_text", ops, "fused op names joined by '_' (as generated)", CONFIRMED)
            )  # noqa: E501
            fields.append(
                _f(
                    "ops",
                    ",".join(_split_inductor_ops(ops)),
                    "op names, best-effort split of ops_text",
                    INFERRED,
                )
            )  # noqa: E501
        if idx is not None:
            fields.append(_f("index", idx, "kernel counter suffix", CONFIRMED))
        return "inductor_triton", fields
    m = _INDUCTOR_OLD.match(b)
    if m:
        return "inductor_triton", [
            _f("kind", "unknown", "older Inductor name without a kind prefix", UNKNOWN),
            _f(
                "signature",
                m.group(1),
                "Triton argument specialization suffix (d: divisible by 16)",
                INFERRED,
            ),  # noqa: E501
        ]
    return None


_XLA = re.compile(r"^(loop|input|output)_([a-z0-9_]*?)_?fusion(?:_(\d+))?$")


def _parse_xla(c: _Ctx) -> tuple[str, list[Field]] | None:
    b = c.base
    if len(b) > 512:
        return None
    m = _XLA.match(b)
    if m:
        kind, ops, idx = m.groups()
        fields = [_f("kind", kind, "loop: elementwise, input: reduction-rooted fusion", CONFIRMED)]  # noqa: E501
        if ops:
            fields.append(_f("ops", ops, "op names in the fusion", CONFIRMED))
        if idx:
            fields.append(_f("index", idx, "fusion counter", CONFIRMED))
        return "xla_fusion", fields
    m = re.match(
        r"^(gemm_fusion_dot|triton_gemm|triton_softmax|cublas_gemm|custom-call|fusion|wrapped_\w+?)(?:[_.](\d+))?$",
        b,
    )  # noqa: E501
    if m:
        fields = [_f("kind", m.group(1), "XLA fusion / custom call", CONFIRMED)]
        if m.group(2):
            fields.append(_f("index", m.group(2), "counter", CONFIRMED))
        return "xla_fusion", fields
    return None


# -- ATen / CUB / fbgemm / cuBLAS helpers ----------------------------------------------------
_ATEN_ELEMENTWISE = frozenset(
    """vectorized_elementwise_kernel unrolled_elementwise_kernel elementwise_kernel
    elementwise_kernel_with_index multi_tensor_apply_kernel distribution_elementwise_grid_stride_kernel
    vectorized_templated_elementwise_kernel""".split()  # noqa: E501
)
_ATEN_INDEX = frozenset(
    """index_elementwise_kernel indexSelectLargeIndex indexSelectSmallIndex indexFuncLargeIndex
    indexFuncSmallIndex vectorized_gather_kernel _scatter_gather_elementwise_kernel
    index_put_with_sort_kernel indexing_backward_kernel take_kernel put_kernel
    index_copy_kernel""".split()
)
_ATEN_SOFTMAX = re.compile(
    r"^(?:softmax_warp_(?:forward|backward)|cunn_SoftMax\w*|cunn_SpatialSoftMax\w*|masked_softmax\w*)$"
)  # noqa: E501
_ATEN_NORM = re.compile(
    r"^(?:vectorized_layer_norm_kernel|layer_norm_grad_input_kernel|GammaBetaBackward\w*|"
    r"RowwiseMoments\w*|LayerNorm\w*|ComputeInternalGradients\w*|ComputeFusedParams\w*|"
    r"batch_norm_\w*|group_norm\w*|GroupNorm\w*|layer_norm\w*|cuApplyLayerNorm\w*|"
    r"cuComputeGradInput\w*|cuComputePartGradGammaBeta\w*)$"
)
_ATEN_SORT = re.compile(
    r"^(?:radixSortKVInPlace|bitonicSortKVInPlace|sort_postprocess_kernel|gatherTopK|segmented_sort\w*|sortKeyValueInplace\w*|warpMergeSortKVInPlace)$"
)  # noqa: E501
_ATEN_MISC = frozenset(
    """compute_grad_weight sum_and_scatter compute_grad_weight_bags krn_partials_per_segment
    krn_partial_segment_offset compute_num_of_partial_segments embedding_backward_feature_kernel
    compute_cuda_kernel renorm_kernel""".split()
)
_FBGEMM_BASES = re.compile(
    r"^(?:split_embedding\w*|bounds_check_indices_kernel\w*|linearize_index_kernel|permute_pooled_embs_kernel\w*|batched_embedding\w*|dense_embedding\w*)$"
)  # noqa: E501
_CUBLAS_HELPERS = re.compile(
    r"^(?:splitKreduce_kernel|gemv2[NT]_kernel\w*|gemvNSP_kernel|gemvx|gemmk1_kernel|"
    r"gemmSN_\w+|dot_kernel|scal_kernel|axpy_kernel\w*|nrm2_kernel\w*|asum_kernel\w*|"
    r"sgemm_largek\w*|magma_\w*|gemm_kernel\w*|reduce_1Block_kernel)$"
)


_OP_PATTERNS = (
    re.compile(r"^CUDAFunctor(?:OnSelf|OnOther)?_(\w+)$"),
    re.compile(r"^(\w+)_kernel_cuda$"),
    re.compile(r"^(\w+)CUDAKernelImpl$"),
    re.compile(r"^launch_(\w+)$"),
    re.compile(r"^(\w+)_kernel_impl$"),
    re.compile(r"^(\w+)_cuda_out$"),
    re.compile(r"^(compare_scalar)_kernel$"),
    re.compile(r"^(?!Binary|AUnary|BUnary|Unary|BinaryOpScalar|TensorList)(\w+?)Functor$"),
    re.compile(r"^(\w+)_functor$"),
    re.compile(r"^(\w+?)Ops$"),
)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _aten_op(n: str) -> str | None:
    lt = n.find("<")
    if lt < 0:
        return None
    for m in _IDENT.finditer(n, lt):
        ident = m.group(0)
        for rx in _OP_PATTERNS:
            mm = rx.match(ident)
            if mm:
                return mm.group(1)
    return None


_ATEN_REDUCE_TAG = re.compile(
    r"\b(ReduceAdd|ReduceMultiply|ReduceMean|ReduceMaximum|ReduceMinimum|TensorAssign)\b"
)
_INDEX_IMPLS = (
    ("index_put_with_sort", "index_put (accumulate, sort-based)"),
    ("index_put_kernel_impl", "index_put"),
    ("index_copy_kernel_impl", "index_copy"),
    ("index_fill_kernel_impl", "index_fill"),
    ("index_kernel_impl", "index (advanced indexing / gather)"),
    ("masked_scatter", "masked_scatter"),
    ("put_kernel", "put_"),
    ("take_kernel", "take"),
)


def _scatter_or_gather(n: str) -> str:
    # _cuda_scatter_gather_internal_kernel<is_scatter_like, scalar_t>
    args = _args_after(n, "_cuda_scatter_gather_internal_kernel<")
    if args and args[0] == "true":
        return "scatter"
    if args and args[0] == "false":
        return "gather"
    return "scatter / gather"


def _aten_index_op(b: str, n: str, reduce: str | None) -> str | None:
    if b.startswith("indexSelect"):
        return "index_select"
    if b.startswith("indexFunc"):
        return "index_add" if reduce == "ReduceAdd" else "index_reduce"
    if b == "vectorized_gather_kernel":
        return "gather"
    if b == "_scatter_gather_elementwise_kernel":
        return {
            "ReduceAdd": "scatter_add / scatter_reduce(sum, mean)",
            "ReduceMean": "scatter_reduce(mean)",
            "ReduceMultiply": "scatter_reduce(prod)",
            "ReduceMaximum": "scatter_reduce(amax)",
            "ReduceMinimum": "scatter_reduce(amin)",
        }.get(reduce or "", _scatter_or_gather(n))
    if b == "indexing_backward_kernel":
        return "index_put (accumulate) / indexing backward"
    for marker, op in _INDEX_IMPLS:
        if marker in n:
            return op
    return None


def _parse_aten(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q, n = c.base, c.qual, c.normalized
    aten_ns = q.startswith(("at::", "at_cuda_detail::", "c10::", "(anonymous namespace)::"))
    if b in _ATEN_ELEMENTWISE:
        fields: list[Field] = []
        args = _args_after(n, b + "<")
        if args and args[0].isdigit():
            if b == "vectorized_elementwise_kernel":
                fields.append(_f("vec_size", args[0], "elements per vectorized load", INFERRED))
            elif b == "elementwise_kernel" and len(args) > 1 and args[1].isdigit():
                fields.append(_f("threads", args[0], "threads per block", INFERRED))
                fields.append(_f("items_per_thread", args[1], "values per thread", INFERRED))
        op = _aten_op(n)
        if op:
            fields.append(
                _f(
                    "op",
                    op,
                    "operation named by the functor/lambda in the template arguments",
                    INFERRED,
                )
            )  # noqa: E501
        return "aten_elementwise", fields
    if b == "reduce_kernel":
        fields = []
        args = _args_after(n, "reduce_kernel<")
        if args and len(args) >= 2 and args[0].isdigit():
            fields.append(_f("threads", args[0], "threads per block", INFERRED))
            fields.append(_f("items_per_thread", args[1], "values per thread", INFERRED))
        ro = _args_after(n, "ReduceOp<")
        if ro:
            fields.append(_f("dtype", _cpp_dtype(ro[0]), "input type", INFERRED))
        op = _aten_op(n[n.find("ReduceOp<") :] if "ReduceOp<" in n else n)
        if op:
            fields.append(
                _f("op", op, "reduction named by the ops/functor template argument", INFERRED)
            )  # noqa: E501
        return "aten_reduce", fields
    if b in _ATEN_INDEX:
        fields = []
        m = _ATEN_REDUCE_TAG.search(n)
        reduce = m.group(1) if m else None
        if reduce:
            fields.append(_f("reduce", reduce, "what happens at each target index", INFERRED))
        op = _aten_index_op(b, n, reduce)
        if op:
            fields.append(_f("op", op, "PyTorch operation behind this indexing kernel", INFERRED))
        return "aten_index", fields
    if _ATEN_SOFTMAX.match(b):
        fields = [
            _f("direction", "bwd" if "ackward" in b else "fwd", "forward / backward", INFERRED)
        ]  # noqa: E501
        args = _args_after(n, b + "<")
        if b.startswith("softmax_warp_") and args and len(args) >= 6:
            fields.append(_f("dtype", _cpp_dtype(args[0]), "input type", INFERRED))
            fields.append(
                _f("log2_elements", args[3], "log2 of the row length handled per warp", INFERRED)
            )  # noqa: E501
            fields.append(_f("is_log_softmax", args[4], "log-softmax", INFERRED))
            fields.append(_f("is_masked", args[5], "masked softmax", INFERRED))
        return "aten_softmax", fields
    if _ATEN_NORM.match(b) and (aten_ns or "::" not in q):
        return "aten_norm", [_f("op", b, "ATen normalization kernel", INFERRED)]
    if _ATEN_SORT.match(b):
        return "aten_sort", [_f("op", b, "ATen sort/top-k kernel", INFERRED)]
    if b.startswith("CatArrayBatchedCopy"):
        fields = [_f("op", "cat", "torch.cat batched copy", INFERRED)]
        variant = b.removeprefix("CatArrayBatchedCopy").lstrip("_")
        if variant:
            fields.append(_f("variant", variant, "copy variant", INFERRED))
        return "aten_copy", fields
    if b in _ATEN_MISC or (aten_ns and not q.startswith("at_cuda_detail::cub::")):
        return "aten", [_f("op", b, "ATen kernel", INFERRED)]
    return None


def _parse_cub(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if "cub::" in q or (b.startswith("Device") and "Kernel" in b):
        fields = [_f("algorithm", b, "CUB device-wide algorithm kernel", CONFIRMED)]
        if q.startswith("at_cuda_detail::"):
            fields.append(_f("bundled_by", "pytorch", "CUB copy bundled with PyTorch", INFERRED))
        return "cub", fields
    return None


def _parse_fbgemm(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if q.startswith("fbgemm_gpu::") or _FBGEMM_BASES.match(b):
        return "fbgemm", [
            _f("op", b, "FBGEMM-GPU kernel (embeddings, sparse features, quantization)", INFERRED)
        ]  # noqa: E501
    return None


def _parse_cublas_helper(c: _Ctx) -> tuple[str, list[Field]] | None:
    b, q = c.base, c.qual
    if q.startswith(
        ("cublasLt::", "cublas::", "epilogue::impl::", "gemvx::")
    ) or _CUBLAS_HELPERS.match(b):  # noqa: E501
        fields = [
            _f(
                "kernel",
                q if "::" in q else b,
                "cuBLAS/cuBLASLt helper or non-xmma kernel",
                INFERRED,
            )
        ]  # noqa: E501
        if "splitKreduce" in b:
            fields.append(
                _f(
                    "split_k_reduce",
                    "true",
                    "reduces split-K partial sums of a preceding GEMM",
                    CONFIRMED,
                )
            )  # noqa: E501
        return "cublas_helper", fields
    return None


_PARSERS = (
    _parse_memory_row,
    _parse_nvjet,
    _parse_xmma,
    _parse_cutlass3,
    _parse_fa3,
    _parse_fa2,
    _parse_xformers,
    _parse_cudnn,
    _parse_cutlass2,
    _parse_cute,
    _parse_cublas_arch,
    _parse_cublas_helper,
    _parse_trtllm,
    _parse_flashinfer,
    _parse_nccl,
    _parse_custom_allreduce,
    _parse_vllm,
    _parse_inductor,
    _parse_xla,
    _parse_cub,
    _parse_aten,
    _parse_fbgemm,
    _parse_serving,
)


def _family_and_fields(c: _Ctx) -> tuple[str, list[Field]]:
    for parser in _PARSERS:
        try:
            got = parser(c)
        except (ValueError, IndexError, KeyError) as exc:
            # A grammar surprise must not take a whole report down: say what failed.
            why = f"{parser.__name__[len('_parse_') :]} parser failed ({type(exc).__name__})"
            return "other", [
                _f("parse_error", why, "this name's fields could not be read", UNKNOWN)
            ]
        if got is not None:
            return got
    return "other", []


@lru_cache(maxsize=8192)
def decode(name: str) -> KernelName:
    """Normalize ``name``, find its family, decode its fields and classify it. Never raises
    on any string (a TypeError for non-strings)."""
    if not isinstance(name, str):
        raise TypeError(f"kernel name must be str, not {type(name).__name__}")
    from .categories import classify_parts

    norm = _normalize_full(name)
    normalized = norm.normalized
    capped, qual, base = _name_parts(name)
    ctx = _Ctx(name, capped, qual, base)
    family, fields = _family_and_fields(ctx)
    if len(name) > MAX_NAME_CHARS:
        fields.insert(
            0,
            _f(
                "truncated",
                str(len(name)),
                f"input of {len(name)} characters; only the first {MAX_NAME_CHARS} were used",
                CONFIRMED,
            ),
        )
    if norm.demangling in (DEMANGLE_FAILED, DEMANGLER_UNAVAILABLE):
        why = (
            "the C++ demangler rejected this name (truncated or invalid)"
            if norm.demangling == DEMANGLE_FAILED
            else "no C++ runtime demangler in this process"
        )
        fields.insert(
            0, _f("demangling", norm.demangling, why + "; name recovered best-effort", UNKNOWN)
        )  # noqa: E501
        if norm.identifiers:
            fields.insert(
                1,
                _f(
                    "identifiers",
                    ",".join(norm.identifiers[:24]),
                    "identifiers read from the mangled name",
                    INFERRED,
                ),
            )  # noqa: E501
    cat = classify_parts(capped, qual, base)
    return KernelName(
        raw=name,
        normalized=normalized,
        base=base,
        family=family,
        category=cat.category,
        subfamily=cat.subfamily,
        rule_id=cat.rule_id,
        fields=tuple(fields),
        demangling=norm.demangling,
    )


def decode_column(series: pl.Series) -> pl.DataFrame:
    """Decode a column of kernel names; each distinct name is decoded once and joined back.

    Returns one row per input row, in input order, with columns ``name`` (the input),
    ``normalized``, ``base``, ``family``, ``category``, ``subfamily`` and ``fields``: a JSON
    string holding a list of ``{"name", "value", "meaning", "confidence"}`` objects (a JSON
    string rather than a struct because different families have different fields).
    Null names give null in every other column.
    """
    import polars as pl

    s = series.cast(pl.String).rename("name")
    distinct = s.drop_nulls().unique(maintain_order=True).to_list()
    decoded = [decode(n) for n in distinct]
    lookup = pl.DataFrame(
        {
            "name": distinct,
            "normalized": [k.normalized for k in decoded],
            "base": [k.base for k in decoded],
            "family": [k.family for k in decoded],
            "category": [k.category for k in decoded],
            "subfamily": [k.subfamily for k in decoded],
            "fields": [json.dumps([f.to_dict() for f in k.fields]) for k in decoded],
        },
        schema={
            "name": pl.String,
            "normalized": pl.String,
            "base": pl.String,
            "family": pl.String,
            "category": pl.String,
            "subfamily": pl.String,
            "fields": pl.String,
        },
    )
    return s.to_frame().join(lookup, on="name", how="left", maintain_order="left")
