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

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .rules import (
    _NESTED_QUANTIFIER,
    MATCH_KEYS,
    SCOPES,
    Matcher,
    RuleFile,
    RuleSet,
    Subject,
    parse_matcher,
)

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

__all__ += ["SCOPES", "_NESTED_QUANTIFIER", "parse_matcher"]  # the matcher lives in rules.py
_RULE_KEYS = MATCH_KEYS | {"id", "category", "subfamily", "why"}
_BUILTIN_FILE = "categories.toml"


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


class Rules(RuleSet[Rule]):
    """The category rules in order (first match wins) and the files they came from."""

    def classify_subject(self, subject: Subject) -> Category:
        rule = self.first_match(subject)
        return _OTHER if rule is None else Category(rule.category, rule.subfamily, rule.id)

    def classify(self, name: str) -> Category:
        rule = self.first(name)
        return _OTHER if rule is None else Category(rule.category, rule.subfamily, rule.id)


def _rule(table: Mapping[str, object], rid: str, *, builtin: bool, origin: str) -> Rule:
    category = table.get("category")
    if category not in CATEGORIES:
        raise ValueError(f"'category' must be one of {', '.join(CATEGORIES)}, not {category!r}")
    subfamily = table.get("subfamily")
    if subfamily is not None and (not isinstance(subfamily, str) or not subfamily):
        raise ValueError("'subfamily' must be a non-empty string")
    why = table.get("why", "")
    if not isinstance(why, str) or (builtin and not why):
        raise ValueError("'why' must be a string" + (" (required)" if builtin else ""))
    return Rule(rid, str(category), subfamily, why, parse_matcher(table), origin)


_RULE_FILE = RuleFile(_BUILTIN_FILE, _RULE_KEYS, _rule, Rules)
builtin_rules_path = _RULE_FILE.builtin_path
_builtin_rules = _RULE_FILE.builtin  # read on first use


def load_rules(extra: Path | str | None = None) -> Rules:
    """The built-in rules, preceded by the rules of ``extra`` when given.

    A user rule with the id of a built-in rule replaces it. A file that cannot be read or
    parsed raises :class:`~tracelens.errors.UsageError` naming the file and the problem.
    """
    return _RULE_FILE.load(extra)


def classify(name: str, rules: Rules | None = None) -> Category:
    """The category of one kernel name (any producer's form)."""
    return (rules or _builtin_rules()).classify(name)


def classify_parts(normalized: str, qualname: str, base: str) -> Category:
    """Classify a name already split by :mod:`tracelens.kernelnames` (built-in rules)."""
    return _builtin_rules().classify_subject(Subject(normalized, qualname, base))


def classify_column(series: pl.Series, rules: Rules | None = None) -> pl.DataFrame:
    """Classify a column of kernel names; each distinct name is classified once, all of
    them by vectorized rule tests (:meth:`~tracelens.rules.RuleSet.first_frame`).

    Returns one row per input row, in input order: ``name``, ``category``, ``subfamily``,
    ``rule_id``. Null names give null categories.
    """
    import polars as pl

    rules = rules or _builtin_rules()
    s = series.cast(pl.String).rename("name")
    first = rules.first_frame(s)
    by_rule = pl.DataFrame(
        {
            "rule": list(range(len(rules.rules))),
            "category": [r.category for r in rules.rules],
            "subfamily": [r.subfamily for r in rules.rules],
            "rule_id": [r.id for r in rules.rules],
        },
        schema={"rule": pl.UInt32, "category": pl.String, "subfamily": pl.String,
                "rule_id": pl.String},
    )  # fmt: skip
    lookup = (
        first.join(by_rule, on="rule", how="left", maintain_order="left")
        .with_columns(pl.col("category").fill_null(_OTHER.category))
        .drop("rule")
    )
    return s.to_frame().join(lookup, on="name", how="left", maintain_order="left")
