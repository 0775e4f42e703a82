"""Danger zone: kernels whose results may change between runs or between batch sizes.

Rules live in ``data/danger.toml`` and use the same boundary-safe matcher as
:mod:`tracelens.categories` (``on``, ``tokens``, ``all_tokens``, ``not_tokens``, ``regex``),
plus optional conditions on decoded fields (``fields = { split = "true" }``; the value
``"-"`` means "the decoder did not produce this field"). Each rule has an ``id``, a
``level`` (``high``, ``medium`` or ``info``), a ``why`` a user can act on, a ``fix`` and a
``source``. Unlike categories, *every* rule that matches is reported.

``load_danger_rules(extra=path)`` puts a user file's rules before the built-in ones; a user
rule with a built-in rule's id replaces it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .choices import LEVELS  # most severe first; the CLI offers the same
from .errors import UsageError, check_at_least, check_choice
from .rules import (
    MATCH_KEYS,
    Matcher,
    RuleFile,
    RuleSet,
    Subject,
    parse_matcher,
)

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl

    from .filters import EventFilter
    from .trace import Trace

__all__ = [
    "LEVELS",
    "DangerHit",
    "DangerRule",
    "DangerRules",
    "check_level",
    "danger_kernels",
    "danger_table",
    "kernels_at_or_above",
    "load_danger_rules",
    "match_danger",
]

ABSENT = "-"
_RULE_KEYS = MATCH_KEYS | {"id", "level", "why", "fix", "source", "fields"}
_BUILTIN_FILE = "danger.toml"


@dataclass(frozen=True)
class DangerRule:
    id: str
    level: str
    why: str
    fix: str
    source: str
    matcher: Matcher
    fields: tuple[tuple[str, str], ...]
    origin: str

    def matches(self, subject: Subject) -> bool:
        if not self.matcher.matches(subject):
            return False
        return not self.fields or self.fields_hold(subject.raw)

    def fields_hold(self, raw: str) -> bool:
        """Whether the decoded fields of ``raw`` are as :attr:`fields` asks."""
        from .kernelnames import decode

        decoded = decode(raw)
        for fname, want in self.fields:
            got = decoded.get(fname)
            if want == ABSENT:
                if got is not None:
                    return False
            elif got != want:
                return False
        return True


@dataclass(frozen=True)
class DangerHit:
    """One rule that fired on one kernel name."""

    rule_id: str
    level: str
    name: str
    why: str
    fix: str
    source: str


class DangerRules(RuleSet[DangerRule]):
    """Ordered danger rules and the files they came from; every rule that matches counts."""

    def match(self, name: str) -> list[DangerHit]:
        return [DangerHit(r.id, r.level, name, r.why, r.fix, r.source) for r in self.every(name)]

    def _confirmers(self) -> list[Callable[[str], bool] | None]:
        return [r.fields_hold if r.fields else None for r in self.rules]

    def frame(self) -> pl.DataFrame:
        """The rules as a table, one row per rule in order: ``rule`` (its position, UInt32,
        as :meth:`every_frame` names it), rule_id, level, why, fix, source and ``order``
        (the level's rank, 0 for high): what a frame of hits joins to."""
        import polars as pl

        return pl.DataFrame(
            {
                "rule": list(range(len(self.rules))),
                "rule_id": [r.id for r in self.rules],
                "level": [r.level for r in self.rules],
                "why": [r.why for r in self.rules],
                "fix": [r.fix for r in self.rules],
                "source": [r.source for r in self.rules],
                "order": [LEVELS.index(r.level) for r in self.rules],
            },
            schema_overrides={"rule": pl.UInt32},
        )


def _text(table: Mapping[str, object], key: str, *, required: bool) -> str:
    value = table.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise ValueError(f"'{key}' must be a non-empty string")
    return value


def _rule(table: Mapping[str, object], rid: str, *, builtin: bool, origin: str) -> DangerRule:
    level = table.get("level")
    if level not in LEVELS:
        raise ValueError(f"'level' must be one of {', '.join(LEVELS)}, not {level!r}")
    why = _text(table, "why", required=True)
    fix = _text(table, "fix", required=True)
    source = _text(table, "source", required=builtin)
    raw_fields = table.get("fields", {})
    if not isinstance(raw_fields, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in raw_fields.items()
    ):
        raise ValueError("'fields' must be a table of field name = string value")
    matcher = parse_matcher(table)
    fields = tuple(sorted(raw_fields.items()))
    return DangerRule(rid, str(level), why, fix, source, matcher, fields, origin)


_RULE_FILE = RuleFile(_BUILTIN_FILE, _RULE_KEYS, _rule, DangerRules)
builtin_danger_path = _RULE_FILE.builtin_path
_builtin = _RULE_FILE.builtin  # read on first use


def load_danger_rules(extra: Path | str | None = None) -> DangerRules:
    """The built-in danger rules, preceded by the rules of ``extra`` when given (a user rule
    with a built-in rule's id replaces it).

    A bad file raises :class:`~tracelens.errors.UsageError` naming the file and the problem.
    """
    return _RULE_FILE.load(extra)


def match_danger(name: str, rules: DangerRules | None = None) -> list[DangerHit]:
    """Every danger rule that fires on ``name`` (any producer's form), in rule order."""
    return (rules or _builtin()).match(name)


_TABLE_SCHEMA = {
    "rule_id": "String",
    "level": "String",
    "name": "String",
    "instances": "Int64",
    "total_ns": "Int64",
    "time_pct": "Float64",
    "why": "String",
    "fix": "String",
    "source": "String",
}
_NEEDED = ("name", "instances", "total_ns", "time_pct")


def danger_table(kernels: pl.DataFrame, rules: DangerRules | None = None) -> pl.DataFrame:
    """One row per (kernel, rule that fires) for a census-like frame.

    ``kernels`` needs columns ``name``, ``instances``, ``total_ns`` and ``time_pct``. The
    result has ``rule_id, level, name, instances, total_ns, time_pct, why, fix, source``,
    sorted by level (high first), then ``total_ns`` descending; it is empty (with that
    schema) when nothing fires.
    """
    import polars as pl

    missing = [c for c in _NEEDED if c not in kernels.columns]
    if missing:
        raise UsageError(
            f"danger_table needs columns {', '.join(_NEEDED)}; missing {', '.join(missing)}"
        )
    rules = rules or _builtin()
    schema = {k: getattr(pl, v) for k, v in _TABLE_SCHEMA.items()}
    table = kernels.select(_NEEDED).with_columns(pl.col("name").cast(pl.String))
    table = table.filter(pl.col("name").is_not_null())
    hits = rules.every_frame(table["name"])  # each distinct name matched once, vectorized
    out = table.join(hits, on="name", how="inner").join(rules.frame(), on="rule", how="inner")
    out = out.with_columns(pl.col("total_ns").fill_null(0).neg().alias("neg_total"))
    out = out.sort("order", "neg_total", "name", "rule_id", maintain_order=True)
    return out.select([pl.col(k).cast(t) for k, t in schema.items()])


def check_level(level: str, param: str = "level") -> str:
    return check_choice(param, level, LEVELS)


def danger_kernels(
    trace: Trace,
    *,
    rules: DangerRules | str | Path | None = None,
    where: EventFilter | None = None,
    top: int | None = None,
) -> pl.DataFrame:
    """The kernels of ``trace`` that are determinism or batch-invariance risks.

    Every kernel of the census (demangled names, ``where`` applied) is matched against the
    danger rules (``rules``: a :class:`DangerRules`, or a TOML file whose rules go before the
    built-in ones). One row per (kernel, rule that fires), as :func:`danger_table`: rule_id,
    level, name, instances (launches), total_ns, time_pct (share of all kernel GPU time that
    passes ``where``, as census), why, fix, source; high first, then by time. Empty, with
    that schema, when nothing fires. ``top`` keeps the first ``top`` rows (None or 0:
    every row, as census).
    """
    from .census import kernel_summary

    top = check_at_least("top", top, 0, meaning="every row") or None
    if not isinstance(rules, DangerRules):
        rules = load_danger_rules(rules)
    df = danger_table(kernel_summary(trace, where=where), rules)
    return df.head(top) if top is not None else df


def kernels_at_or_above(findings: pl.DataFrame, level: str) -> int:
    """How many distinct kernels in a :func:`danger_table` frame have a finding at ``level``
    or a more severe one (``high`` > ``medium`` > ``info``)."""
    check_level(level)
    severe = set(LEVELS[: LEVELS.index(level) + 1])
    return len(
        {
            r["name"]
            for r in findings.select("name", "level").iter_rows(named=True)
            if r["level"] in severe
        }
    )
