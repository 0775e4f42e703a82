"""One rule machinery for every rules file (``data/categories.toml``, ``data/danger.toml``
and a user's own): the views of a kernel name a rule looks at (:class:`Subject`), the
boundary-safe :class:`Matcher` (``on``, ``tokens``, ``all_tokens``, ``not_tokens``,
``regex``; see :mod:`tracelens.categories` for the semantics), reading and checking a rules
file, and :class:`RuleSet`: an ordered rule list with the files it came from, a memo per
name, and override by id (a user file's rules go first; a user rule with a built-in rule's
id replaces it).

Categories take the first rule that matches; the danger zone reports every one.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, Self, TypeVar

from ._resources import data_dir
from .errors import UsageError
from .names import _name_parts

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl

SCOPES = ("name", "qualname", "base")
MATCH_KEYS = frozenset({"on", "tokens", "all_tokens", "not_tokens", "regex"})
#: Distinct names whose matches a RuleSet remembers.
MEMO_NAMES = 16384


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

    __slots__ = ("name", "qualname", "base", "raw", "_words")

    def __init__(self, name: str, qualname: str, base: str, raw: str | None = None) -> None:
        self.name = name
        self.qualname = qualname
        self.base = base
        self.raw = name if raw is None else raw  # the name as the trace spells it
        self._words: dict[str, str] = {}

    @classmethod
    def of(cls, raw: str) -> Subject:
        if not isinstance(raw, str):
            raise TypeError(f"kernel name must be str, not {type(raw).__name__}")
        return cls(*_name_parts(raw), raw)

    def text(self, scope: str) -> str:
        return getattr(self, scope)

    def words(self, scope: str) -> str:
        w = self._words.get(scope)
        if w is None:
            w = self._words[scope] = _words_text(self.text(scope))
        return w


# -- matchers -----------------------------------------------------------------------------
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


# -- rule sets ----------------------------------------------------------------------------------
class RuleLike(Protocol):
    id: str
    matcher: Matcher

    def matches(self, subject: Subject) -> bool: ...


R = TypeVar("R", bound=RuleLike)


class RuleSet(Generic[R]):
    """An ordered rule list and the files it came from; what matches a name is remembered
    for :data:`MEMO_NAMES` distinct names."""

    def __init__(self, rules: Iterable[R], sources: Iterable[str] = ()) -> None:
        self.rules: tuple[R, ...] = tuple(rules)
        self.sources: tuple[str, ...] = tuple(sources)
        self._first = lru_cache(maxsize=MEMO_NAMES)(self._first_uncached)
        self._every = lru_cache(maxsize=MEMO_NAMES)(self._every_uncached)

    def __iter__(self) -> Iterator[R]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __repr__(self) -> str:
        sources = ", ".join(self.sources) or "<memory>"
        return f"{type(self).__name__}({len(self.rules)} rules from {sources})"

    @staticmethod
    def _check(name: object) -> None:
        if not isinstance(name, str):
            raise TypeError(f"kernel name must be str, not {type(name).__name__}")

    def first_match(self, subject: Subject) -> R | None:
        return next((r for r in self.rules if r.matches(subject)), None)

    def _first_uncached(self, name: str) -> R | None:
        return self.first_match(Subject.of(name))

    def _every_uncached(self, name: str) -> tuple[R, ...]:
        subject = Subject.of(name)
        return tuple(r for r in self.rules if r.matches(subject))

    def first(self, name: str) -> R | None:
        """The first rule that matches ``name`` (any producer's form), or None."""
        self._check(name)
        return self._first(name)

    def every(self, name: str) -> tuple[R, ...]:
        """Every rule that matches ``name``, in rule order."""
        self._check(name)
        return self._every(name)

    # -- a column of names at once (tracelens.rulecolumn) ----------------------------------
    def _confirmers(self) -> list[Callable[[str], bool] | None]:
        """Per rule, a test of the raw name beyond its matcher (None: the matcher decides)."""
        return []

    def _masks(self, names: Sequence[str] | pl.Series) -> tuple[pl.DataFrame, list[pl.Series]]:
        from .rulecolumn import rule_masks, views_frame

        views = views_frame(names)
        masks = rule_masks([r.matcher for r in self.rules], views, self._confirmers())
        return views, masks

    def first_frame(self, names: Sequence[str] | pl.Series) -> pl.DataFrame:
        """Each distinct name of ``names`` once (``name``) and the position in :attr:`rules`
        of the first rule that matches it (``rule``, UInt32; null: none), as :meth:`first`
        says for each name, without a Python loop over names."""
        import polars as pl

        views, masks = self._masks(names)
        first = pl.lit(None, dtype=pl.UInt32)
        for i in reversed(range(len(masks))):
            first = pl.when(masks[i]).then(pl.lit(i, dtype=pl.UInt32)).otherwise(first)
        return views.select(pl.col("raw").alias("name"), first.alias("rule"))

    def every_frame(self, names: Sequence[str] | pl.Series) -> pl.DataFrame:
        """One row per (distinct name, rule that matches it): ``name`` and ``rule`` (its
        position in :attr:`rules`, UInt32), names in first-seen order and each name's rules
        in rule order, as :meth:`every` says."""
        import polars as pl

        views, masks = self._masks(names)
        at = views.select(pl.col("raw").alias("name"), pl.int_range(pl.len()).alias("row"))
        parts = [
            at.filter(m).with_columns(rule=pl.lit(i, dtype=pl.UInt32))
            for i, m in enumerate(masks)
            if m.any()
        ]
        if not parts:
            return pl.DataFrame(schema={"name": pl.String, "rule": pl.UInt32})
        return pl.concat(parts).sort("row", "rule").select("name", "rule")

    def overridden_by(self, user: list[R], source: str) -> Self:
        """``user``'s rules first, then the rules of this set whose id none of them has."""
        ids = {r.id for r in user}
        kept = [r for r in self.rules if r.id not in ids]
        return type(self)([*user, *kept], [source, *self.sources])


def parse_rule_file(
    path: Path, allowed_keys: Iterable[str], build: Callable[[Mapping[str, object], str], R]
) -> list[R]:
    """The rules of one file: each ``[[rule]]`` table has only ``allowed_keys`` and a unique
    id, then ``build(table, id)`` checks the rest (raising ValueError with the reason) and
    makes the rule. A problem raises UsageError naming the file and the rule."""
    out: list[R] = []
    seen: set[str] = set()
    for i, table in enumerate(read_rule_tables(path)):
        try:
            out.append(build(table, check_rule_id(table, seen, allowed_keys)))
        except ValueError as exc:
            raise UsageError(f"{path}: {rule_label(i, table)}: {_one_line(str(exc))}") from None
    return out


S = TypeVar("S", bound=RuleSet)


class RuleFile(Generic[S]):
    """One kind of rules file (categories, danger): the built-in file in ``data/``, read
    once, and user files in the same format whose rules go first (override by id).
    ``build(table, id, builtin=, origin=)`` checks one ``[[rule]]`` table past the keys and
    the id and makes the rule (``builtin``: the built-in file, which must say more, e.g. a
    ``why``; ``origin``: the file's path); ``rule_set(rules, sources)`` makes the set."""

    def __init__(
        self,
        file_name: str,
        keys: Iterable[str],
        build: Callable[..., RuleLike],
        rule_set: Callable[[list, list[str]], S],
    ) -> None:
        self.file_name = file_name
        self.keys = frozenset(keys)
        self._build = build
        self._rule_set = rule_set
        self._builtin: S | None = None

    def builtin_path(self) -> Path:
        return data_dir() / self.file_name

    def parse(self, path: Path, *, builtin: bool) -> list:
        """The rules of the file at ``path`` (UsageError naming the file and the rule)."""

        def build(table: Mapping[str, object], rid: str) -> RuleLike:
            return self._build(table, rid, builtin=builtin, origin=str(path))

        return parse_rule_file(path, self.keys, build)

    def builtin(self) -> S:
        """The built-in rules (read on first use)."""
        if self._builtin is None:
            path = self.builtin_path()
            self._builtin = self._rule_set(self.parse(path, builtin=True), [str(path)])
        return self._builtin

    def load(self, extra: Path | str | None = None) -> S:
        """The built-in rules, preceded by the rules of the user file ``extra`` when given."""
        if extra is None:
            return self.builtin()
        path = Path(extra)
        return self.builtin().overridden_by(self.parse(path, builtin=False), str(path))
