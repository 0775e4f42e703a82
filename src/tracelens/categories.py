"""Kernel categories: one source of truth, as data.

Rules live in ``data/categories.toml``: an ordered list, first match wins. Each rule names a
``category`` (one of :data:`CATEGORIES`), an optional ``subfamily``, a short ``why``, and a
match on one view of the kernel name (``on``):

* ``name`` (default): the normalized name, template arguments included
  (``at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, ...>``);
* ``qualname``: without template arguments (``at::native::vectorized_elementwise_kernel``);
* ``base``: the last identifier only (``vectorized_elementwise_kernel``).

Matching never falls for substrings. ``tokens`` (any of them), ``all_tokens`` (every one) and
``not_tokens`` (none of them) are identifiers matched as whole *words*: a name is split at
``_``, ``::``, ``<``, punctuation, lower-to-upper case changes (``RMSNorm`` -> rms, norm) and
letter/digit changes, so ``mul`` matches ``CUDAFunctor_mul`` and ``MulFunctor`` but not
``matmul``, ``add`` does not match ``badd`` and ``norm`` does not match ``normal``. A token of
several words (``rms_norm``) must appear as consecutive words of one identifier.
``regex`` is a Python regular expression searched in the chosen view (anchor it with ``^``);
patterns with a nested quantifier such as ``(a+)+`` are refused. All conditions given must
hold. The matcher looks at the first ``MAX_PARSE_CHARS`` characters of a name.

A user file in the same format (``load_rules(extra=path)``) is tried *before* the built-in
rules, so it can add categories for in-house kernels or override a built-in rule; a user rule
with the same ``id`` as a built-in rule replaces it.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ._resources import data_dir
from .errors import UsageError
from .kernelnames import _name_parts

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl

__all__ = [
    "CATEGORIES",
    "DESCRIPTIONS",
    "Category",
    "Matcher",
    "Rule",
    "Rules",
    "Subject",
    "classify",
    "classify_column",
    "load_rules",
]

#: Categories in display order; ``other`` is last.
CATEGORIES = (
    "gemm",
    "attention",
    "convolution",
    "communication",
    "elementwise",
    "reduction",
    "normalization",
    "memory",
    "sort_sampling",
    "moe",
    "quantization",
    "embedding",
    "compiler_generated",
    "other",
)

DESCRIPTIONS = {
    "gemm": "matrix multiplies: cuBLAS(Lt) nvjet/xmma, CUTLASS, GEMV, split-K reduce, templates",
    "attention": "attention kernels, KV-cache writes and split-KV / cascade merges",
    "convolution": "cuDNN / CUTLASS convolutions (implicit GEMM, Winograd, FFT)",
    "communication": "NCCL collectives and custom all-reduce",
    "elementwise": "pointwise ops, activations, rotary embedding, optimizer updates",
    "reduction": "reductions, softmax, scans, pooling",
    "normalization": "layer / RMS / batch / group norm",
    "memory": "copies, concatenation, indexing, layout transforms, memcpy and memset",
    "sort_sampling": "sort, top-k, unique, sampling",
    "moe": "mixture-of-experts routing, alignment and expert GEMM kernels",
    "quantization": "quantize / dequantize kernels",
    "embedding": "embedding-table lookups and their backward, sparse-feature preprocessing",
    "compiler_generated": "Inductor Triton kernels and XLA fusions",
    "other": "no rule matched",
}

SCOPES = ("name", "qualname", "base")
_RULE_KEYS = frozenset(
    {"id", "category", "subfamily", "on", "tokens", "all_tokens", "not_tokens", "regex", "why"}
)
_MATCH_KEYS = frozenset({"on", "tokens", "all_tokens", "not_tokens", "regex"})
_BUILTIN_FILE = "categories.toml"


# -- words --------------------------------------------------------------------------------
_IDENT_CHARS = re.compile(r"[A-Za-z0-9_]+")
# Words inside an identifier: an acronym before a capitalised word (RMS in RMSNorm), a
# (capitalised) lower-case word, an upper-case run, or digits. Linear: each alternative
# consumes a maximal run and the lookahead is one character.
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def _words_of(ident: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(ident)]


def _words_text(text: str) -> str:
    """``| w w | w |``: the words of each identifier, identifiers separated by ``|``."""
    parts = [" ".join(_words_of(ident)) for ident in _IDENT_CHARS.findall(text)]
    return "| " + " | ".join(parts) + " |"


def _token_key(token: str) -> str:
    words = _words_of(token)
    if not words or not _IDENT_CHARS.fullmatch(token):
        raise ValueError(
            f"token {token!r} is not an identifier (letters, digits, '_'); use 'regex' instead"
        )
    return " " + " ".join(words) + " "


# -- the name being matched -------------------------------------------------------------------
class Subject:
    """The three views of one kernel name, with their word texts computed on demand."""

    __slots__ = ("name", "qualname", "base", "_words")

    def __init__(self, name: str, qualname: str, base: str) -> None:
        self.name = name
        self.qualname = qualname
        self.base = base
        self._words: dict[str, str] = {}

    @classmethod
    def of(cls, raw: str) -> Subject:
        if not isinstance(raw, str):
            raise TypeError(f"kernel name must be str, not {type(raw).__name__}")
        return cls(*_name_parts(raw))

    def text(self, scope: str) -> str:
        return getattr(self, scope)

    def words(self, scope: str) -> str:
        w = self._words.get(scope)
        if w is None:
            w = self._words[scope] = _words_text(self.text(scope))
        return w


# -- matchers (shared with tracelens.danger) --------------------------------------------------
# A group that contains + or * (or {m,n}) and is itself repeated: (a+)+, (\w*)*, (x+){2,}
_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*(?:[+*]|\{\d*,?\d*\})\)(?:[+*]|\{\d*,?\d*\})")


@dataclass(frozen=True)
class Matcher:
    """Boundary-safe match on one view of a kernel name (see the module docstring)."""

    on: str = "name"
    tokens: tuple[str, ...] = ()
    all_tokens: tuple[str, ...] = ()
    not_tokens: tuple[str, ...] = ()
    regex: re.Pattern[str] | None = None

    def matches(self, subject: Subject) -> bool:
        if self.tokens or self.all_tokens or self.not_tokens:
            words = subject.words(self.on)
            if self.tokens and not any(t in words for t in self.tokens):
                return False
            if any(t not in words for t in self.all_tokens):
                return False
            if any(t in words for t in self.not_tokens):
                return False
        if self.regex is not None and self.regex.search(subject.text(self.on)) is None:
            return False
        return True


def _str_list(table: Mapping[str, object], key: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key!r} must be a list of strings")
    return tuple(value)


def parse_matcher(table: Mapping[str, object]) -> Matcher:
    """Build a :class:`Matcher` from a rule table; ValueError with a one-line reason."""
    on = table.get("on", "name")
    if on not in SCOPES:
        raise ValueError(f"'on' must be one of {', '.join(SCOPES)}, not {on!r}")
    tokens = tuple(_token_key(t) for t in _str_list(table, "tokens"))
    all_tokens = tuple(_token_key(t) for t in _str_list(table, "all_tokens"))
    not_tokens = tuple(_token_key(t) for t in _str_list(table, "not_tokens"))
    regex = None
    if "regex" in table:
        pattern = table["regex"]
        if not isinstance(pattern, str) or not pattern:
            raise ValueError("'regex' must be a non-empty string")
        if _NESTED_QUANTIFIER.search(pattern):
            raise ValueError(
                f"regex {pattern!r} repeats a group that itself repeats "
                "(catastrophic backtracking); rewrite it without nested quantifiers"
            )
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"invalid regex {pattern!r}: {exc}") from None
    if not (tokens or all_tokens or regex is not None):
        raise ValueError("needs at least one of 'tokens', 'all_tokens' or 'regex'")
    return Matcher(on, tokens, all_tokens, not_tokens, regex)


def read_rule_tables(path: Path) -> list[dict[str, object]]:
    """The ``[[rule]]`` tables of a rules file; UsageError naming the file otherwise."""
    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError:
        raise UsageError(f"{path}: rules file not found") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read rules file ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {_one_line(str(exc))}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not valid TOML: file is not UTF-8 text") from None
    unknown = sorted(set(doc) - {"version", "rule"})
    if unknown:
        raise UsageError(
            f"{path}: unknown top-level key {unknown[0]!r}; a rules file has [[rule]] tables"
        )
    version = doc.get("version", 1)
    if version != 1:
        raise UsageError(f"{path}: unsupported rules file version {version!r}; use version = 1")
    rules = doc.get("rule", [])
    if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
        raise UsageError(f"{path}: 'rule' must be an array of tables ([[rule]])")
    return rules


def _one_line(text: str) -> str:
    return " ".join(text.split())


def rule_label(i: int, table: Mapping[str, object]) -> str:
    rid = table.get("id")
    return f"rule {i + 1}" + (f" (id {rid!r})" if isinstance(rid, str) else "")


# -- rules ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Category:
    """Where a kernel belongs. ``rule_id`` is the rule that decided (None for ``other``)."""

    category: str
    subfamily: str | None = None
    rule_id: str | None = None


_OTHER = Category("other", None, None)


@dataclass(frozen=True)
class Rule:
    id: str
    category: str
    subfamily: str | None
    why: str
    matcher: Matcher
    origin: str  # the file the rule came from

    def matches(self, subject: Subject) -> bool:
        return self.matcher.matches(subject)


class Rules:
    """An ordered rule list (first match wins) and the files it came from."""

    def __init__(self, rules: Iterable[Rule], sources: Iterable[str] = ()) -> None:
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.sources: tuple[str, ...] = tuple(sources)
        self._cached = lru_cache(maxsize=16384)(self._classify_uncached)

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __repr__(self) -> str:
        return f"Rules({len(self.rules)} rules from {', '.join(self.sources) or '<memory>'})"

    def classify_subject(self, subject: Subject) -> Category:
        for rule in self.rules:
            if rule.matcher.matches(subject):
                return Category(rule.category, rule.subfamily, rule.id)
        return _OTHER

    def _classify_uncached(self, name: str) -> Category:
        return self.classify_subject(Subject.of(name))

    def classify(self, name: str) -> Category:
        if not isinstance(name, str):
            raise TypeError(f"kernel name must be str, not {type(name).__name__}")
        return self._cached(name)


def check_rule_id(table: Mapping[str, object], seen: set[str], allowed: Iterable[str]) -> str:
    """The checks every rules file shares (categories and danger): known keys only, and a
    unique, non-empty id, which is returned (and added to ``seen``)."""
    allowed = sorted(allowed)
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (allowed: {', '.join(allowed)})")
    rid = table.get("id")
    if not isinstance(rid, str) or not rid:
        raise ValueError("missing 'id' (a non-empty string)")
    if rid in seen:
        raise ValueError("duplicate id")
    seen.add(rid)
    return rid


def _parse_rules(path: Path, *, builtin: bool) -> list[Rule]:
    tables = read_rule_tables(path)
    out: list[Rule] = []
    seen: set[str] = set()
    for i, table in enumerate(tables):
        label = rule_label(i, table)
        try:
            rid = check_rule_id(table, seen, _RULE_KEYS)
            category = table.get("category")
            if category not in CATEGORIES:
                raise ValueError(
                    f"'category' must be one of {', '.join(CATEGORIES)}, not {category!r}"
                )
            subfamily = table.get("subfamily")
            if subfamily is not None and (not isinstance(subfamily, str) or not subfamily):
                raise ValueError("'subfamily' must be a non-empty string")
            why = table.get("why", "")
            if not isinstance(why, str) or (builtin and not why):
                raise ValueError("'why' must be a string" + (" (required)" if builtin else ""))
            matcher = parse_matcher(table)
        except ValueError as exc:
            raise UsageError(f"{path}: {label}: {_one_line(str(exc))}") from None
        out.append(Rule(rid, str(category), subfamily, why, matcher, str(path)))
    return out


def builtin_rules_path() -> Path:
    return data_dir() / _BUILTIN_FILE


@lru_cache(maxsize=1)
def _builtin_rules() -> Rules:
    path = builtin_rules_path()
    return Rules(_parse_rules(path, builtin=True), [str(path)])


def load_rules(extra: Path | str | None = None) -> Rules:
    """The built-in rules, preceded by the rules of ``extra`` when given.

    A user rule with the id of a built-in rule replaces it. A file that cannot be read or
    parsed raises :class:`~tracelens.errors.UsageError` naming the file and the problem.
    """
    builtin = _builtin_rules()
    if extra is None:
        return builtin
    path = Path(extra)
    user = _parse_rules(path, builtin=False)
    ids = {r.id for r in user}
    kept = [r for r in builtin.rules if r.id not in ids]
    return Rules([*user, *kept], [str(path), *builtin.sources])


def classify(name: str, rules: Rules | None = None) -> Category:
    """The category of one kernel name (any producer's form)."""
    return (rules or _builtin_rules()).classify(name)


def classify_parts(normalized: str, qualname: str, base: str) -> Category:
    """Classify a name already split by :mod:`tracelens.kernelnames` (built-in rules)."""
    return _builtin_rules().classify_subject(Subject(normalized, qualname, base))


def classify_column(series: pl.Series, rules: Rules | None = None) -> pl.DataFrame:
    """Classify a column of kernel names; each distinct name is classified once.

    Returns one row per input row, in input order: ``name``, ``category``, ``subfamily``,
    ``rule_id``. Null names give null categories.
    """
    import polars as pl

    rules = rules or _builtin_rules()
    s = series.cast(pl.String).rename("name")
    distinct = s.drop_nulls().unique(maintain_order=True).to_list()
    cats = [rules.classify(n) for n in distinct]
    lookup = pl.DataFrame(
        {
            "name": distinct,
            "category": [c.category for c in cats],
            "subfamily": [c.subfamily for c in cats],
            "rule_id": [c.rule_id for c in cats],
        },
        schema={
            "name": pl.String,
            "category": pl.String,
            "subfamily": pl.String,
            "rule_id": pl.String,
        },
    )
    return s.to_frame().join(lookup, on="name", how="left", maintain_order="left")
