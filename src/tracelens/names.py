"""Kernel names as text: in-process demangling (libstdc++'s ``__cxa_demangle`` through
ctypes), normalization to one spelling whatever the producer (nsys demangledName/shortName,
kineto, mangled ``_Z`` names), and the three views rules and decoders look at: the
normalized name, the qualified name without template arguments, and the base identifier.

This module depends on nothing else in tracelens, so categories (rules) and kernelnames
(decoders) both build on it without importing each other.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
import threading
from collections.abc import Iterator
from functools import lru_cache
from typing import NamedTuple

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


# A source name is <length><identifier>; numbers that are not lengths are read whole and
# passed over: a literal's value (``Li64E``, ``Lf3f800000E``), a substitution or template
# parameter (``S4_``, ``T0_``), a vector size (``Dv4_``), an enum literal's value after its
# type's name (``LNS_15FloatRoundStyleE2EE``). Read as lengths they made identifiers of
# the text after them ('ELi3EEENS0_4' from ``ILi12ELi3EEENS0_4arch``, 'EE').
_SOURCE_NAME = re.compile(
    r"L[a-z]n?[0-9a-f]+E|[ST][0-9A-Z]*_|Dv\d+_|(?<=E)\d+E(?=[EIJLN])|(?<!\d)(\d{1,3})(?!\d)"
)


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
        if m.group(1) is None:  # not a length
            pos = m.end()
            continue
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


def _is_angle_bracket(s: str, i: int) -> bool:
    """Whether the ``<`` or ``>`` at ``s[i]`` opens or closes template arguments: not the
    ``<`` of ``operator<``/``operator<<``, nor the ``>`` of ``->``."""
    if s[i] == "<":
        return not (s.endswith("operator", 0, i) or s.endswith("operator<", 0, i))
    return not (i and s[i - 1] == "-")


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
            if not _is_angle_bracket(s, i):
                continue
            stack.append(c)
            counts[c] += 1
        elif c == ">":
            if not _is_angle_bracket(s, i):
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
            if c == "<" and not _is_angle_bracket(s, i):
                continue
            if not depth_stack:
                out.append(s[start:i])
            depth_stack.append(c)
            counts[c] += 1
        elif c == ">":
            if not _is_angle_bracket(s, i):
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
